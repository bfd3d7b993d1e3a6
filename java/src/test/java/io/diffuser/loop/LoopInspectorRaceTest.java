package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * A stop or dispose from the inspector on one thread while a callback's send drains the
 * idle loop on another, and that drain waits for the inspector to report a failure: a
 * handler's {@code send}, on the handler's own executor, drains inside the handler; an
 * attached feedback's {@code propagate} has the sending thread drain once it returns. The
 * close waits neither for the handler the drain runs inside nor for the gear's delivery
 * (through the binding, as Swift's LoopInspectorRaceTests). Staged with latches; a close
 * that waited would hang, caught by the timeout.
 */
public class LoopInspectorRaceTest {
  private static ExecutorService daemonThread() {
    return Executors.newSingleThreadExecutor(work -> {
      Thread thread = new Thread(work);
      thread.setDaemon(true); // a hung run must not keep the test JVM alive
      return thread;
    });
  }

  private static void checkAnInspectorClosingWhileACallbackDrains(boolean propagates, boolean disposes)
      throws Exception {
    Gear<Integer> gear = new Gear<>();
    ExecutorService sender = daemonThread();
    ExecutorService failing = daemonThread();
    CountDownLatch dispatched = new CountDownLatch(1);
    CountDownLatch inDrainsHandler = new CountDownLatch(1);
    CountDownLatch inInspector = new CountDownLatch(1);
    CountDownLatch sent = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    AtomicInteger failures = new AtomicInteger();
    AtomicReference<Loop<Integer, String, String>> current = new AtomicReference<>();
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Loop<Integer, String, String> loop = Loop.<Integer, String, String>builder(0,
            (model, event) -> Next.dispatch(event))
        .handler(sender, (effect, job) -> {
          if (!effect.equals("send")) {
            return;
          }
          dispatched.await();
          job.send("fail"); // the loop is idle: drains here, on this thread
          sent.countDown();
        })
        .handler(failing, (effect, job) -> {
          if (!effect.equals("fail")) {
            return;
          }
          inDrainsHandler.await();
          throw new Exception("fails on its executor"); // the inspector closes
        })
        .handler((effect, job) -> {
          if (!effect.equals("fail")) {
            return;
          }
          inDrainsHandler.countDown();
          inInspector.await();
          throw new Exception("fails in the drain"); // reported by the drainer
        })
        .feedback(Feedback.<Integer, String, Integer>attached(gear, g -> "fail"))
        .inspector(trace -> {
          log.add(trace.kind() + (trace.event() == null ? "" : " " + trace.event()));
          if (trace.kind() != LoopTrace.Kind.EFFECT_FAILED || failures.incrementAndGet() != 1) {
            return;
          }
          inInspector.countDown();
          if (disposes) {
            current.get().dispose();
          } else {
            current.get().stop();
          }
          closed.countDown();
        })
        .build();
    current.set(loop);
    if (propagates) {
      sender.execute(() -> {
        gear.send(1); // the loop is idle: this thread drains it
        sent.countDown();
      });
    } else {
      loop.dispatch("send");
      dispatched.countDown(); // the dispatch's drain is over: the handler's send drains
    }
    sent.await();
    closed.await();
    assertFalse(loop.isRunning());
    String close = disposes ? "DISPOSED" : "STOPPED";
    List<String> expected = new ArrayList<>(Arrays.asList("STARTED", "STEPPED send", "STEPPED fail",
        "EFFECT_FAILED", close, "EFFECT_FAILED"));
    if (propagates) {
      expected.remove("STEPPED send");
    }
    assertEquals(expected, new ArrayList<>(log));
    loop.dispose();
    sender.shutdown();
    failing.shutdown();
    assertEquals(true, sender.awaitTermination(10, TimeUnit.SECONDS) && failing.awaitTermination(10, TimeUnit.SECONDS));
  }

  @Test(timeout = 20000)
  public void anInspectorStoppingTheLoopWhileAHandlersSendDrainsItReturns() throws Exception {
    checkAnInspectorClosingWhileACallbackDrains(false, false);
  }

  @Test(timeout = 20000)
  public void anInspectorDisposingTheLoopWhileAHandlersSendDrainsItReturns() throws Exception {
    checkAnInspectorClosingWhileACallbackDrains(false, true);
  }

  @Test(timeout = 20000)
  public void anInspectorStoppingTheLoopWhileAPropagateDrainsItReturns() throws Exception {
    checkAnInspectorClosingWhileACallbackDrains(true, false);
  }

  @Test(timeout = 20000)
  public void anInspectorDisposingTheLoopWhileAPropagateDrainsItReturns() throws Exception {
    checkAnInspectorClosingWhileACallbackDrains(true, true);
  }
}
