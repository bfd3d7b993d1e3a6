package io.diffuser.fuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertTrue;

import io.diffuser.Effect;
import io.diffuser.diffuser.Diffuser;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/** Events from other threads, including threads the JVM did not start, and dispose races. */
public class FuserThreadTest {
  private int counter; // deliberately not atomic

  @Test
  public void eventsFromANativeThreadReachJavaEffects() {
    TestSource<Object> source = new TestSource<>();
    List<Object> got = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    Thread me = Thread.currentThread();
    Disposable d = Fuser.extract((Object o) -> o == null ? "null" : o + "!", Fuser.from(source)).connect(v -> {
      got.add(v);
      threads.add(Thread.currentThread().getName());
      assertNotSame(me, Thread.currentThread());
    });
    Effect<Object> dispatch = source.effects.get(0);
    Object[] events = new Object[100];
    for (int i = 0; i < events.length; i++) {
      events[i] = i == 50 ? null : Integer.valueOf(i);
    }
    int[] statuses = NativeThreads.emitOnNativeThread(dispatch, events);
    for (int i = 0; i < events.length; i++) {
      assertEquals("status of event " + i, 0, statuses[i]);
    }
    assertEquals("the glue detaches the thread it attached", 1, statuses[events.length]);
    assertEquals(100, got.size());
    assertEquals("0!", got.get(0));
    assertEquals("null", got.get(50));
    assertEquals("99!", got.get(99));
    d.dispose();
    // Once disposed, the dispatch is gone: a native emitter gets an error, nothing arrives.
    int[] after = NativeThreads.emitOnNativeThread(dispatch, new Object[] {"late"});
    assertTrue(after[0] != 0);
    assertEquals(100, got.size());
  }

  @Test
  public void eventsFromANativeThreadCanRunADiffuser() {
    TestSource<Integer> source = new TestSource<>();
    List<Integer> rendered = new CopyOnWriteArrayList<>();
    Diffuser<Integer> diffuser = Diffuser.into(rendered::add);
    Disposable d = Fuser.from(source).connect(diffuser::run);
    int[] statuses = NativeThreads.emitOnNativeThread(source.effects.get(0), new Object[] {1, 1, 2, 2, 3});
    d.dispose();
    assertEquals(Arrays.asList(1, 2, 3), rendered);
    assertEquals(1, statuses[5]);
  }

  @Test
  public void emissionsFromManyThreadsAreDeliveredOneAtATime() throws Exception {
    TestSource<Integer> source = new TestSource<>();
    Disposable d = Fuser.from(source).connect(v -> counter++);
    int threads = 8;
    int events = 20_000;
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread worker = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < events; i++) {
          source.emit(i);
        }
      });
      workers.add(worker);
      worker.start();
    }
    start.countDown();
    for (Thread worker : workers) {
      worker.join();
    }
    d.dispose();
    assertEquals(threads * events, counter);
  }

  /**
   * Four threads connect and dispose over and over while another thread emits without
   * pause: no effect may see an event once its dispose() has returned.
   */
  @Test
  public void noEventAfterDisposeReturned() throws Exception {
    TestSource<Integer> source = new TestSource<>();
    Fuser<Integer> fuser = Fuser.extract((Integer i) -> i + 1, Fuser.from(source));
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger violations = new AtomicInteger();
    AtomicInteger delivered = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();

    Thread emitter = new Thread(() -> {
      int i = 0;
      while (!stop.get()) {
        try {
          source.emit(i++);
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }
    });
    emitter.start();

    int cycles = 2_000;
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread worker = new Thread(() -> {
        try {
          for (int c = 0; c < cycles; c++) {
            AtomicBoolean disposed = new AtomicBoolean();
            Disposable connection = fuser.connect(v -> {
              if (disposed.get()) {
                violations.incrementAndGet();
              }
              delivered.incrementAndGet();
            });
            if ((c & 7) == 0) {
              Thread.yield();
            }
            connection.dispose();
            disposed.set(true);
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      });
      workers.add(worker);
      worker.start();
    }
    for (Thread worker : workers) {
      worker.join();
    }
    stop.set(true);
    emitter.join();
    assertEquals(null, failure.get());
    assertEquals(0, violations.get());
    assertEquals(0, source.effects.size());
    assertEquals(4 * cycles, source.connects.get());
    assertEquals(4 * cycles, source.disposes.get());
    assertTrue("some events were delivered", delivered.get() > 0);
  }

  /** A started thread that counts {@code latch} down after 100 ms. */
  private static Thread countDownLater(CountDownLatch latch) {
    Thread thread = new Thread(() -> {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
      latch.countDown();
    });
    thread.start();
    return thread;
  }

  /** Waits for {@code latch}, keeping the thread's interrupt. */
  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  public void disposeWaitsForAnEventInFlight() throws Exception {
    TestSource<String> source = new TestSource<>();
    CountDownLatch inEffect = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean effectDone = new AtomicBoolean();
    Disposable d = Fuser.from(source).connect(v -> {
      inEffect.countDown();
      awaitQuietly(release);
      effectDone.set(true);
    });
    Thread emitter = new Thread(() -> source.emit("x"));
    emitter.start();
    inEffect.await();
    Thread releaser = countDownLater(release);
    assertFalse(effectDone.get());
    d.dispose(); // waits for the event in flight
    assertTrue(effectDone.get());
    emitter.join();
    releaser.join();
    assertEquals(Collections.emptyList(), source.effects);
  }

  /** A transform is part of the delivery: dispose() waits for an event inside it. */
  @Test
  public void disposeWaitsForAnEventInsideATransform() throws Exception {
    TestSource<String> source = new TestSource<>();
    CountDownLatch inTransform = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean disposeReturned = new AtomicBoolean();
    AtomicInteger late = new AtomicInteger();
    List<String> got = new CopyOnWriteArrayList<>();
    Disposable d = Fuser.extract((String v) -> {
      inTransform.countDown();
      awaitQuietly(release);
      if (disposeReturned.get()) {
        late.incrementAndGet();
      }
      return v + "!";
    }, Fuser.from(source)).connect(v -> {
      if (disposeReturned.get()) {
        late.incrementAndGet();
      }
      got.add(v);
    });
    Thread emitter = new Thread(() -> source.emit("x"));
    emitter.start();
    inTransform.await();
    Thread releaser = countDownLater(release);
    d.dispose(); // waits for the event inside the transform
    disposeReturned.set(true);
    assertEquals("dispose() returned only after the transform", 0, release.getCount());
    emitter.join();
    releaser.join();
    assertEquals(0, late.get());
    assertEquals(Collections.singletonList("x!"), got);
  }

  /**
   * Two threads dispose one connection while an event is in flight and another emitter
   * waits: once either dispose() returned, the waiting event must not be delivered.
   */
  @Test
  public void noEventAfterAConcurrentSecondDisposeReturned() throws Exception {
    for (int trial = 0; trial < 20; trial++) {
      TestSource<String> source = new TestSource<>();
      CountDownLatch inEffect = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicBoolean secondReturned = new AtomicBoolean();
      AtomicInteger late = new AtomicInteger();
      Disposable d = Fuser.from(source).connect(v -> {
        if (secondReturned.get()) {
          late.incrementAndGet();
        }
        if (v.equals("first")) {
          inEffect.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      });
      Effect<String> dispatch = source.effects.get(0);
      Thread first = new Thread(() -> dispatch.run("first"));
      first.start();
      inEffect.await();
      Thread waiting = new Thread(() -> dispatch.run("second"));
      waiting.start();
      Thread disposer1 = new Thread(d::dispose);
      disposer1.start();
      Thread.sleep(10);
      Thread disposer2 = new Thread(() -> {
        d.dispose();
        secondReturned.set(true);
      });
      disposer2.start();
      Thread.sleep(10);
      release.countDown();
      for (Thread t : Arrays.asList(first, waiting, disposer1, disposer2)) {
        t.join();
      }
      assertEquals("trial " + trial, 0, late.get());
    }
  }

  /**
   * A source that emits 1 from a thread of its own, in a loop, from connect until its
   * disposable is disposed; that dispose stops the thread and joins it.
   */
  private static final class Ticker implements Source<Integer> {
    final AtomicInteger emitted = new AtomicInteger();
    final AtomicInteger disposes = new AtomicInteger();
    volatile Thread thread;

    @Override
    public Disposable connect(Effect<Integer> effect) {
      AtomicBoolean stop = new AtomicBoolean();
      Thread ticking = new Thread(() -> {
        while (!stop.get()) {
          effect.run(1);
          emitted.incrementAndGet();
        }
      }, "ticker");
      thread = ticking;
      ticking.start();
      return () -> {
        stop.set(true);
        boolean interrupted = false;
        while (true) {
          try {
            ticking.join(); // waits for an emission that may be waiting for the connection
            break;
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
        disposes.incrementAndGet();
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      };
    }
  }

  /**
   * Regression: an effect disposes its connection while another source of the connection
   * emits from a thread of its own, and that source's dispose joins the thread. The
   * emitting thread waits for the connection (the effect is running), so a dispose that
   * disconnected the sources while holding the connection deadlocked. Now it neither
   * deadlocks nor lets an event reach the effect after it returned.
   */
  @Test(timeout = 30_000)
  public void disposeInsideAnEffectWhileASourceJoinsItsEmittingThread() throws Exception {
    for (int trial = 0; trial < 20; trial++) {
      Ticker ticker = new Ticker();
      TestSource<Integer> manual = new TestSource<>();
      AtomicReference<Disposable> connection = new AtomicReference<>();
      AtomicBoolean disposed = new AtomicBoolean();
      AtomicInteger ticks = new AtomicInteger();
      AtomicInteger late = new AtomicInteger();
      Fuser<Integer> both = Fuser.fromAll(Fuser.from(ticker), Fuser.from(manual));
      connection.set(both.connect(v -> {
        if (disposed.get()) {
          late.incrementAndGet();
        }
        if (v == 2) {
          try {
            Thread.sleep(5); // time for the ticker to block on this connection
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          connection.get().dispose();
          disposed.set(true);
        } else {
          ticks.incrementAndGet();
        }
      }));
      while (ticks.get() < 10) {
        Thread.yield();
      }
      manual.emit(2); // on this thread: the effect disposes the connection
      assertTrue("trial " + trial + ": the effect disposed the connection", disposed.get());
      assertEquals("trial " + trial + ": the manual source was disconnected", 0, manual.effects.size());
      assertEquals(1, manual.disposes.get());
      assertEquals(1, ticker.disposes.get());
      assertFalse("trial " + trial + ": the ticker's thread was joined", ticker.thread.isAlive());
      int ticksAfter = ticks.get();
      Thread.sleep(2);
      assertEquals(ticksAfter, ticks.get());
      assertEquals("trial " + trial + ": events reached the effect after dispose returned", 0, late.get());
      connection.get().dispose(); // idempotent
      assertEquals(1, ticker.disposes.get());
    }
  }
}
