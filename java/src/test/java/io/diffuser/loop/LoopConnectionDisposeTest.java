package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import io.diffuser.Effect;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * A loop connection disposed while the loop's turn, on another thread, is still inside
 * its source's {@code connect}: the dispose returns without waiting for the connect, an
 * event the source emits after it is dropped, and the source is disconnected once, on
 * the connecting thread, when its connect returns. What the source's {@code dispose()}
 * throws then goes to that thread's uncaught exception handler, since neither the
 * connection's dispose (it has returned) nor the call that ran the turn throws it.
 */
public class LoopConnectionDisposeTest {
  /** A source whose connect keeps its effect, then waits until it is let go. */
  static final class SlowSource {
    final CountDownLatch connecting = new CountDownLatch(1);
    final CountDownLatch goOn = new CountDownLatch(1);
    final AtomicReference<Effect<String>> sink = new AtomicReference<>();
    final List<Thread> connectThreads = Collections.synchronizedList(new ArrayList<>());
    final List<Thread> disposeThreads = Collections.synchronizedList(new ArrayList<>());
    final RuntimeException disposeFailure;

    SlowSource(RuntimeException disposeFailure) {
      this.disposeFailure = disposeFailure;
    }

    Fuser<String> fuser() {
      return Fuser.from((Effect<String> effect) -> {
        sink.set(effect);
        connectThreads.add(Thread.currentThread());
        connecting.countDown();
        try {
          goOn.await();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        return () -> {
          disposeThreads.add(Thread.currentThread());
          if (disposeFailure != null) throw disposeFailure;
        };
      });
    }
  }

  /** What reached the uncaught exception handlers of the threads it made, in order. */
  static final class Uncaught {
    final List<Throwable> seen = Collections.synchronizedList(new ArrayList<>());

    Thread thread(Runnable body, String name) {
      Thread thread = new Thread(body, name);
      thread.setUncaughtExceptionHandler((t, failure) -> seen.add(failure));
      return thread;
    }
  }

  /** A loop that adds the length of each event's text; "slow" holds its step. */
  private static Loop.Builder<Integer, String, Void> adder(CountDownLatch inStep, CountDownLatch endStep) {
    return Loop.<Integer, String, Void>builder(0, (model, event) -> {
      if (event.equals("slow")) {
        inStep.countDown();
        try {
          endStep.await();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        return Next.noChange();
      }
      return Next.next(model + event.length());
    });
  }

  private static boolean eventually(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) return true;
      Thread.sleep(1);
    }
    return condition.getAsBoolean();
  }

  /** The loop's turn runs on its executor's thread, which is inside the connect. */
  @Test(timeout = 30000)
  public void aDisposeWhileTheSourceConnectsOnTheExecutorDropsLaterEvents() throws Exception {
    Uncaught uncaught = new Uncaught();
    ExecutorService executor = Executors.newSingleThreadExecutor(body -> uncaught.thread(body, "loop-executor"));
    RuntimeException failure = new IllegalStateException("the source's dispose");
    SlowSource source = new SlowSource(failure);
    try (Loop<Integer, String, Void> loop =
        Loop.<Integer, String, Void>builder(0, (model, event) -> Next.next(model + event.length()))
            .executor(executor).build()) {
      Disposable connection = loop.connect(source.fuser());
      assertTrue(source.connecting.await(10, TimeUnit.SECONDS));
      source.sink.get().run("a"); // before the dispose: accepted

      connection.dispose(); // returns at once, without the source's failure
      assertEquals("disconnected before its connect returned", 0, source.disposeThreads.size());
      source.sink.get().run("after the dispose");

      source.goOn.countDown();
      assertTrue("never disconnected", eventually(() -> source.disposeThreads.size() == 1));
      assertTrue("the failure never reached the executor's handler", eventually(() -> uncaught.seen.size() == 1));
      loop.stop();
      assertEquals("an event emitted after the dispose returned was handled", 1, (int) loop.model());
      assertSame(source.connectThreads.get(0), source.disposeThreads.get(0));
      assertSame(failure, uncaught.seen.get(0));
    } finally {
      executor.shutdown();
    }
  }

  /**
   * Without an executor: a dispatch on another thread runs the turn, which is inside the
   * connect when the test's thread disposes the connection. That dispatch returns
   * normally; its thread's handler gets the source's failure.
   */
  @Test(timeout = 30000)
  public void aDisposeWhileADispatchsTurnConnectsTheSource() throws Exception {
    Uncaught uncaught = new Uncaught();
    CountDownLatch inStep = new CountDownLatch(1);
    CountDownLatch endStep = new CountDownLatch(1);
    RuntimeException failure = new IllegalStateException("the source's dispose");
    SlowSource source = new SlowSource(failure);
    try (Loop<Integer, String, Void> loop = adder(inStep, endStep).build()) {
      AtomicReference<Object> dispatched = new AtomicReference<>();
      Thread turn = uncaught.thread(() -> {
        try {
          dispatched.set(loop.dispatch("slow"));
        } catch (Throwable t) {
          dispatched.set(t);
        }
      }, "turn");
      turn.start();
      assertTrue(inStep.await(10, TimeUnit.SECONDS));
      Disposable connection = loop.connect(source.fuser()); // queued behind the step
      endStep.countDown();
      assertTrue(source.connecting.await(10, TimeUnit.SECONDS));

      connection.dispose();
      assertEquals(0, source.disposeThreads.size());
      source.sink.get().run("after the dispose");
      source.goOn.countDown();
      turn.join();

      assertTrue("the dispatch threw: " + dispatched.get(), !(dispatched.get() instanceof Throwable));
      assertEquals(1, source.disposeThreads.size());
      assertSame(turn, source.disposeThreads.get(0));
      assertEquals(1, uncaught.seen.size());
      assertSame(failure, uncaught.seen.get(0));
      assertEquals("an event emitted after the dispose returned was handled", 0, (int) loop.model());
    }
  }

  /**
   * The same dispose, from a thread that disposes while the connect is under way and a
   * source whose dispose does not throw: nothing reaches a handler, and a restart does
   * not connect the disposed registration again.
   */
  @Test(timeout = 30000)
  public void aDisposedRegistrationStaysDisconnectedAcrossARestart() throws Exception {
    Uncaught uncaught = new Uncaught();
    ExecutorService executor = Executors.newSingleThreadExecutor(body -> uncaught.thread(body, "loop-executor"));
    SlowSource source = new SlowSource(null);
    try (Loop<Integer, String, Void> loop =
        Loop.<Integer, String, Void>builder(0, (model, event) -> Next.next(model + event.length()))
            .executor(executor).build()) {
      Disposable connection = loop.connect(source.fuser());
      assertTrue(source.connecting.await(10, TimeUnit.SECONDS));
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread disposer = uncaught.thread(() -> {
        try {
          connection.dispose();
        } catch (Throwable t) {
          thrown.set(t);
        }
      }, "disposer");
      disposer.start();
      disposer.join();
      assertNull(thrown.get());
      source.goOn.countDown();
      assertTrue(eventually(() -> source.disposeThreads.size() == 1));
      loop.stop();
      loop.start();
      loop.stop();
      assertEquals("connected again", 1, source.connectThreads.size());
      assertEquals(1, source.disposeThreads.size());
      assertEquals(0, uncaught.seen.size());
    } finally {
      executor.shutdown();
    }
  }
  /**
   * A loop's fuser whose second source refuses after the first connected: the first's
   * dispose() exception is suppressed by the refusal that the inspector gets, on the
   * start that connects them as inside an emission's turn, and reaches no handler.
   */
  @Test(timeout = 30000)
  public void aDisposeExceptionWhileARefusalUndoesALoopConnectGoesWithTheRefusal() throws Exception {
    List<Throwable> uncaught = Collections.synchronizedList(new ArrayList<>());
    Thread.UncaughtExceptionHandler saved = Thread.currentThread().getUncaughtExceptionHandler();
    Thread.currentThread().setUncaughtExceptionHandler((thread, failure) -> uncaught.add(failure));
    try {
      RuntimeException disposeFailure = new RuntimeException("a's dispose");
      RuntimeException refusal = new RuntimeException("b refuses");
      Fuser<String> a = Fuser.from((Effect<String> effect) -> () -> {
        throw disposeFailure;
      });
      Fuser<String> b = Fuser.from((Effect<String> effect) -> {
        throw refusal;
      });
      AtomicReference<Effect<String>> sink = new AtomicReference<>();
      Fuser<String> emitter = Fuser.from((Effect<String> effect) -> {
        sink.set(effect);
        return () -> {};
      });
      List<Throwable> refusals = Collections.synchronizedList(new ArrayList<>());
      AtomicReference<Loop<Integer, String, Void>> self = new AtomicReference<>();
      try (Loop<Integer, String, Void> loop = Loop.<Integer, String, Void>builder(0, (model, event) -> {
            if (event.equals("restart")) {
              self.get().stop();
              self.get().start();
            }
            return Next.noChange();
          })
          .inspector(trace -> {
            if (trace.kind() == LoopTrace.Kind.SOURCE_FAILED) refusals.add(trace.failure());
          })
          .manualStart().build()) {
        self.set(loop);
        loop.connect(emitter);
        loop.connect(Fuser.fromAll(a, b));
        loop.start(); // connects them: a, then b refuses
        sink.get().run("restart"); // the emission's turn connects them again
        assertEquals(2, refusals.size());
        for (Throwable r : refusals) {
          assertSame(refusal, r);
        }
        assertEquals(2, refusal.getSuppressed().length);
        assertSame(disposeFailure, refusal.getSuppressed()[0]);
        assertSame(disposeFailure, refusal.getSuppressed()[1]);
        assertEquals(new ArrayList<>(), uncaught);
      }
    } finally {
      Thread.currentThread().setUncaughtExceptionHandler(saved);
    }
  }
}
