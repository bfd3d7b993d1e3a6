package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;

/**
 * The callbacks of a loop that cannot fail it (a feedback's work and request, a gear's
 * propagate, a coalescing key, an inspector, an on-cancel action) hand what they throw to
 * the thread's uncaught exception handler, and the loop goes on as documented for each.
 * Every loop here runs on the calling thread, whose handler the tests replace.
 */
public class LoopUncaughtTest {
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  @Rule public final UncaughtRecorder uncaughtHandler = new UncaughtRecorder();
  private final List<Throwable> uncaught = uncaughtHandler.seen;

  private static Loop.Builder<Integer, Integer, Void> adder() {
    return Loop.<Integer, Integer>reducer(0, Integer::sum);
  }

  /**
   * An executor whose execute throws loses no work: the failure goes to the uncaught
   * handler and the work runs on the handing thread, once even if the executor took it.
   */
  @Test
  public void anExecutorThatThrowsLosesNoWork() {
    RuntimeException boom = new RuntimeException("executor failed");
    List<Runnable> taken = Collections.synchronizedList(new ArrayList<>());
    int[] calls = {0};
    java.util.concurrent.Executor flaky = work -> {
      calls[0]++;
      if (calls[0] == 1) {
        throw boom; // refuses the first piece outright
      }
      if (calls[0] == 2) {
        taken.add(work); // takes the second, then throws anyway
        throw boom;
      }
      work.run();
    };
    try (Loop<Integer, Integer, Void> loop = adder().executor(flaky).build()) {
      loop.dispatch(1);
      loop.dispatch(2);
      loop.dispatch(3);
      assertEquals("every event handled, none twice", Integer.valueOf(6), loop.model());
      for (Runnable late : taken) {
        late.run(); // the executor runs what it took after all: nothing happens again
      }
      assertEquals(Integer.valueOf(6), loop.model());
      assertTrue(loop.isRunning());
    }
    assertEquals(List.of(boom, boom), uncaught);
  }

  /**
   * An executor that runs work at once, one step a piece: each hand-back is run by the
   * drain that made it, not a stack level deeper, so no step is lost to a stack overflow.
   */
  @Test
  public void anExecutorThatRunsWorkAtOnceDoesNotRecurse() {
    int events = 100_000;
    try (Loop<Integer, Integer, Void> loop = adder().executor(Runnable::run, 1).build()) {
      loop.observe(model -> {
        if (model == 1) {
          for (int i = 1; i < events; i++) {
            loop.dispatch(1); // queued behind this step
          }
        }
      });
      loop.dispatch(1);
      assertEquals(Integer.valueOf(events), loop.model());
      loop.dispatch(1);
      assertEquals("the loop goes on", Integer.valueOf(events + 1), loop.model());
    }
    assertEquals(List.of(), uncaught);
  }

  /** Work a handler's executor refuses runs on the handing thread, without a report. */
  @Test
  public void aRefusingHandlerExecutorRunsTheWorkHere() {
    java.util.concurrent.Executor refusing = work -> {
      throw new java.util.concurrent.RejectedExecutionException("shut down");
    };
    try (Loop<Integer, Integer, Integer> loop = Loop.<Integer, Integer, Integer>builder(0,
            (model, event) -> Next.next(model + event, List.of(event)))
        .handler(refusing, (effect, job) -> log.add("handled " + effect))
        .build()) {
      loop.dispatch(5);
      assertEquals(List.of("handled 5"), log);
    }
    assertEquals(List.of(), uncaught);
  }

  @Test
  public void workThatThrowsIsFinishedAndReported() {
    RuntimeException boom = new RuntimeException("work failed");
    try (Loop<Integer, Integer, Void> loop = adder().build()) {
      loop.add(Feedback.<Integer, Integer>work(Overlap.KEEP_PREVIOUS, null, (model, job) -> {
        log.add("work " + model);
        if (model == 1) {
          job.send(10); // sent before the failure: stays queued
          throw boom;
        }
        job.finish();
      }));
      loop.dispatch(1);
      loop.dispatch(1);
    }
    // With KEEP_PREVIOUS an unfinished job would have kept every later model out.
    assertEquals(Arrays.asList("work 0", "work 1", "work 11", "work 12"), log);
    assertEquals(List.of(boom), uncaught);
  }

  @Test
  public void aRequestThatThrowsKeepsTheRequestAndIsReported() {
    RuntimeException boom = new RuntimeException("no request");
    try (Loop<Integer, Integer, Void> loop = adder().build()) {
      loop.add(Feedback.request((Integer model) -> {
        if (model == 3) {
          throw boom;
        }
        return model / 2;
      }, (Integer request, Job<Integer> job) -> log.add("request " + request)));
      loop.dispatch(3); // 3: throws, the request stays 0
      loop.dispatch(1); // 4: request 2
    }
    assertEquals(Arrays.asList("request 0", "request 2"), log);
    assertEquals(List.of(boom), uncaught);
  }

  @Test
  public void aRequestWhoseEqualsThrowsKeepsTheRequestAndIsReported() {
    RuntimeException boom = new RuntimeException("cannot compare");
    try (Loop<Integer, Integer, Void> loop = adder().build()) {
      loop.add(Feedback.request((Integer model) -> new ThrowingQuery(model, boom),
          (ThrowingQuery request, Job<Integer> job) -> log.add("request " + request.id)));
      loop.dispatch(3); // 3: comparing 0 with 3 throws, the request stays 0
      loop.dispatch(1); // 4: request 4
      loop.dispatch(0); // 4: the same request
    }
    assertEquals(Arrays.asList("request 0", "request 4"), log);
    assertEquals(List.of(boom), uncaught);
  }

  @Test
  public void aRequestWhoseEqualsThrowsAnUnprintableExceptionDuringASourcesEmissionIsNotThrownAtTheSource() {
    // What the binding throws to fail the comparison, once it reported the exception, is
    // made without the exception's toString(): nothing is thrown in its place, which the
    // glue would keep for the Java call in progress (the source's emission).
    RuntimeException boom = new Unprintable();
    java.util.concurrent.atomic.AtomicReference<io.diffuser.Effect<Integer>> emit =
        new java.util.concurrent.atomic.AtomicReference<>();
    io.diffuser.fuser.Fuser<Integer> source = capturing(emit);
    try (Loop<Integer, Integer, Void> loop = adder().build()) {
      loop.add(Feedback.request((Integer model) -> new ThrowingQuery(model, boom),
          (ThrowingQuery request, Job<Integer> job) -> log.add("request " + request.id)));
      loop.connect(source);
      emit.get().run(3); // comparing 0 with 3 throws, the request stays 0
      emit.get().run(1);
    }
    assertEquals(Arrays.asList("request 0", "request 4"), log);
    assertEquals(1, uncaught.size());
    assertTrue("the request's own exception", uncaught.get(0) == boom); // assertSame would print it
  }

  /** A request equal to no request, not even to itself (as NaN), that counts its comparisons. */
  private static final class Unequal {
    int compared;

    @Override
    public boolean equals(Object other) {
      compared++;
      return false;
    }

    @Override
    public int hashCode() {
      return 0;
    }
  }

  @Test
  public void aRequestThatIsTheSameObjectStaysWithoutItsEqualsBeingCalled() {
    // Objects.equals decides (the glue's type of Java values): the same object is the same
    // request, and its equals is not called, also for a request the binding holds for
    // the comparison.
    Unequal request = new Unequal();
    try (Loop<Integer, Integer, Void> loop = adder().build()) {
      loop.add(Feedback.request((Integer model) -> request, (Unequal r, Job<Integer> job) -> log.add("request")));
      loop.dispatch(1);
      loop.dispatch(2);
    }
    assertEquals(List.of("request"), log);
    assertEquals(0, request.compared);
    assertEquals(List.of(), uncaught);
  }

  /** A source that hands its effect to {@code emit} when connected, for the test to emit. */
  private static io.diffuser.fuser.Fuser<Integer> capturing(
      java.util.concurrent.atomic.AtomicReference<io.diffuser.Effect<Integer>> emit) {
    return io.diffuser.fuser.Fuser.from(effect -> {
      emit.set(effect);
      return () -> { };
    });
  }

  @Test
  public void aRequestThatThrowsDuringASourcesEmissionIsNotThrownAtTheSource() {
    RuntimeException boom = new RuntimeException("no request");
    java.util.concurrent.atomic.AtomicReference<io.diffuser.Effect<Integer>> emit =
        new java.util.concurrent.atomic.AtomicReference<>();
    io.diffuser.fuser.Fuser<Integer> source = capturing(emit);
    try (Loop<Integer, Integer, Void> loop = adder().build()) {
      loop.add(Feedback.request((Integer model) -> {
        if (model == 3) {
          throw boom;
        }
        return model;
      }, (Integer request, Job<Integer> job) -> log.add("request " + request)));
      loop.connect(source);
      emit.get().run(3); // the step runs inside the emission: its request throws
      emit.get().run(1);
    }
    assertEquals(Arrays.asList("request 0", "request 4"), log);
    assertEquals(List.of(boom), uncaught);
  }

  @Test
  public void aPropagateThatThrowsCountsAsNoEventAndIsReported() {
    RuntimeException boom = new RuntimeException("no gear event");
    Gear<String> gear = new Gear<>();
    try (Loop<Integer, Integer, Void> loop = adder()
        .feedback(Feedback.attached(gear, (String g) -> {
          if (g.equals("bad")) {
            throw boom;
          }
          return Integer.parseInt(g);
        }))
        .build()) {
      gear.send("bad");
      gear.send("5");
      assertEquals(Integer.valueOf(5), loop.model());
    }
    assertEquals(List.of(boom), uncaught);
  }

  @Test
  public void aKeyThatThrowsGivesNoKeyAndIsReported() {
    RuntimeException boom = new RuntimeException("no key");
    try (Loop<Integer, Integer, Void> loop = adder()
        .coalescing((Integer event) -> {
          throw boom;
        })
        .build()) {
      assertTrue(loop.dispatch(2));
      assertTrue(loop.dispatch(3));
      assertEquals("no event was coalesced away", Integer.valueOf(5), loop.model());
    }
    assertEquals(List.of(boom, boom), uncaught);
  }

  @Test
  public void anInspectorThatThrowsIsReportedAndTheLoopGoesOn() {
    RuntimeException boom = new RuntimeException("inspector failed");
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum)
        .inspector(trace -> {
          log.add(trace.kind().toString());
          if (trace.kind() == LoopTrace.Kind.STARTED) {
            throw boom;
          }
        })
        .build()) {
      loop.dispatch(4);
      assertEquals(Integer.valueOf(4), loop.model());
    }
    assertEquals(Arrays.asList("STARTED", "STEPPED", "DISPOSED"), log);
    assertEquals(List.of(boom), uncaught);
  }

  @Test
  public void anOnCancelActionThatThrowsIsReportedAndTheOthersRun() {
    RuntimeException boom = new RuntimeException("cancel failed");
    try (Loop<Integer, Integer, Void> loop = adder().build()) {
      loop.add(Feedback.<Integer, Integer>work((model, job) -> {
        job.onCancel(() -> {
          throw boom;
        });
        job.onCancel(() -> log.add("cancel " + model));
      }));
      loop.dispatch(1); // cancels the work on model 0
    }
    assertEquals(Arrays.asList("cancel 0", "cancel 1"), log);
    assertEquals(2, uncaught.size());
    assertSame(boom, uncaught.get(0));
  }

  /**
   * A key that cannot be hashed is a key function that throws: the event gets no key,
   * and the exception goes to the thread's uncaught exception handler.
   */
  @Test
  public void aKeyThatCannotBeHashedIsReportedAndGivesNoKey() {
    LoopCoalescingTest.BadKey key = new LoopCoalescingTest.BadKey();
    key.broken = true;
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum)
        .coalescing((Integer event) -> key).build()) {
      assertTrue(loop.dispatch(2));
      assertTrue(loop.dispatch(3));
      assertEquals(Integer.valueOf(5), loop.model());
    }
    assertEquals("each failure reported", 2, uncaught.size());
  }
}
