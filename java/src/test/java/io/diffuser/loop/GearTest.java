package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;

import io.diffuser.Function;
import io.diffuser.fuser.Disposable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.Test;

/** Gears: one loop pushes, another hears, through the core's gear. */
public class GearTest {
  private static Loop<Integer, Integer, Void> adder() {
    return Loop.reducer(0, (Integer model, Integer event) -> model + event).build();
  }

  @Test
  public void oneLoopPushesAnotherHears() {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Gear<String> gear = new Gear<>();
    try (Loop<Integer, Integer, Void> feature = adder(); Loop<Integer, Integer, Void> routing = adder()) {
      Disposable attached = routing.add(Feedback.<Integer, Integer, String>attached(gear, g -> {
        log.add("heard:" + g);
        return g.equals("ignore") ? null : 100;
      }));
      Disposable pushing = feature.add(Feedback.<Integer, Integer, String>pushing(gear, m -> {
        log.add("push?" + m);
        return m > 10 ? "over:" + m : null;
      }));
      assertEquals(Arrays.asList("push?0"), log);

      feature.dispatch(5);
      feature.dispatch(7);
      assertEquals(Arrays.asList("push?0", "push?5", "push?12", "heard:over:12"), log);
      assertEquals(Integer.valueOf(100), routing.model());

      gear.send("direct");
      gear.send("ignore");
      assertEquals(Integer.valueOf(200), routing.model());

      routing.stop();
      gear.send("while stopped");
      routing.start();
      assertEquals(Integer.valueOf(200), routing.model());

      attached.dispose();
      log.clear();
      feature.dispatch(1);
      assertEquals(Arrays.asList("push?13"), log);
      pushing.dispose();
      feature.dispatch(1);
      assertEquals(Arrays.asList("push?13"), log);
    }
  }

  @Test
  public void aThrowingPropagateCountsAsNoEvent() {
    Gear<Integer> gear = new Gear<>();
    try (Loop<Integer, Integer, Void> loop = adder()) {
      loop.add(Feedback.<Integer, Integer, Integer>attached(gear, g -> {
        if (g < 0) {
          throw new IllegalArgumentException("negative");
        }
        return g;
      }));
      gear.send(-1);
      gear.send(4);
      assertEquals(Integer.valueOf(4), loop.model());
    }
  }

  /**
   * An attached feedback's propagate runs on the thread that sends into the gear, as a
   * callback of the loop's run: a stop, dispose or start it makes while another thread
   * stops the loop leaves the work to that stop and returns, as from any other callback,
   * instead of waiting for that stop, which waits for the propagate to return (it
   * disconnects the gear). The other thread's stop is under way once it reports the
   * queued event it drops.
   */
  @Test(timeout = 20000)
  public void aPropagateThatClosesOrStartsItsLoopWhileAnotherThreadStopsItReturns() throws Exception {
    List<Consumer<Loop<Integer, Integer, Void>>> calls = Arrays.asList(Loop::stop, Loop::dispose, Loop::start);
    for (Consumer<Loop<Integer, Integer, Void>> call : calls) {
      Gear<Integer> gear = new Gear<>();
      ManualExecutor executor = new ManualExecutor();
      CountDownLatch inPropagate = new CountDownLatch(1);
      CountDownLatch stopping = new CountDownLatch(1);
      AtomicReference<Loop<Integer, Integer, Void>> self = new AtomicReference<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Loop<Integer, Integer, Void> loop = Loop.reducer(0, (Integer model, Integer event) -> model + event)
          .executor(executor)
          .inspector(trace -> {
            if (trace.kind() == LoopTrace.Kind.DROPPED) {
              stopping.countDown();
            }
          })
          .feedback(Feedback.<Integer, Integer, Integer>attached(gear,
              blockingPropagate(inPropagate, stopping, () -> call.accept(self.get()), failure)))
          .build();
      self.set(loop);
      executor.runAll(); // the start: the feedback attaches
      loop.dispatch(1); // queued: the stop drops it
      Thread sender = new Thread(() -> gear.send(1));
      sender.start();
      inPropagate.await();
      loop.stop();
      sender.join();
      assertEquals(null, failure.get());
      assertFalse(loop.isRunning());
      loop.dispose();
    }
  }

  /**
   * The loop's turn that removes an attached feedback (its registration disposed) waits
   * for the feedback's propagate in progress on another thread. A stop or dispose that
   * propagate makes meanwhile does not wait for that drain, which waits for it: it drops
   * the events not yet handled and returns, and the drain goes on once the propagate has
   * returned. The drain is under way once the update has queued the removal.
   */
  @Test(timeout = 20000)
  public void aPropagateThatClosesItsLoopWhileItsFeedbackIsRemovedReturns() throws Exception {
    List<Consumer<Loop<Integer, Integer, Void>>> closes = Arrays.asList(Loop::stop, Loop::dispose);
    for (Consumer<Loop<Integer, Integer, Void>> close : closes) {
      Gear<Integer> gear = new Gear<>();
      CountDownLatch inPropagate = new CountDownLatch(1);
      CountDownLatch removing = new CountDownLatch(1);
      AtomicReference<Loop<Integer, Integer, Void>> self = new AtomicReference<>();
      AtomicReference<Disposable> registration = new AtomicReference<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Loop<Integer, Integer, Void> loop = Loop.reducer(0, (Integer model, Integer event) -> {
        registration.get().dispose(); // queued after this step, in the same drain
        removing.countDown();
        return model + event;
      }).build();
      self.set(loop);
      registration.set(loop.add(Feedback.<Integer, Integer, Integer>attached(gear,
          blockingPropagate(inPropagate, removing, () -> close.accept(self.get()), failure))));
      Thread sender = new Thread(() -> gear.send(1));
      sender.start();
      inPropagate.await();
      Thread dispatcher = new Thread(() -> loop.dispatch(1));
      dispatcher.start();
      sender.join();
      dispatcher.join();
      assertEquals(null, failure.get());
      assertFalse(loop.isRunning());
      loop.dispose();
    }
  }

  /**
   * A propagate that makes no event: it says it has {@code entered}, waits for {@code go},
   * then runs {@code call}, keeping what that throws in {@code failure}.
   */
  private static Function<Integer, Integer> blockingPropagate(
      CountDownLatch entered, CountDownLatch go, Runnable call, AtomicReference<Throwable> failure) {
    return gearEvent -> {
      entered.countDown();
      try {
        go.await();
        call.run();
      } catch (Throwable t) {
        failure.set(t);
      }
      return null;
    };
  }

  @Test(expected = NullPointerException.class)
  public void aGearIsRequired() {
    Feedback.<Integer, Integer, Integer>pushing(null, m -> m);
  }
}
