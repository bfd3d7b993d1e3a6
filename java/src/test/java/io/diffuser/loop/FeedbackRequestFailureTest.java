package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.diffuser.fuser.Disposable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Rule;
import org.junit.Test;

/**
 * What a request feedback's request function, or a request's {@code equals}, throws goes
 * to the loop's inspector as FEEDBACK_FAILED, with the exception itself, in its place
 * among the traces; only a loop without an inspector hands it to the thread's uncaught
 * exception handler (see {@link LoopUncaughtTest}). Either way the request stays as it
 * was and the loop goes on.
 */
public class FeedbackRequestFailureTest {
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
  @Rule public final UncaughtRecorder uncaughtHandler = new UncaughtRecorder();

  /** A loop summing its events, whose inspector logs steps and feedback failures. */
  private Loop.Builder<Integer, Integer, Void> inspectedAdder() {
    return Loop.<Integer, Integer>reducer(0, Integer::sum).inspector(trace -> {
      switch (trace.kind()) {
        case STEPPED:
          log.add("stepped " + trace.event());
          break;
        case FEEDBACK_FAILED:
          log.add(trace.toString());
          failures.add(trace.failure());
          break;
        default:
          break;
      }
    });
  }

  @Test
  public void aRequestThatThrowsGoesToTheInspectorInItsPlace() {
    RuntimeException boom = new IllegalStateException("no request for 3");
    try (Loop<Integer, Integer, Void> loop = inspectedAdder().build()) {
      loop.add(Feedback.request((Integer model) -> {
        if (model == 3) {
          throw boom;
        }
        return model / 2;
      }, (Integer request, Job<Integer> job) -> log.add("request " + request)));
      loop.observe(model -> log.add("observed " + model));
      loop.dispatch(3); // 3: throws, the request stays 0
      loop.dispatch(1); // 4: request 2
    }
    assertEquals(Arrays.asList(
        "request 0", "observed 0",
        "stepped 3", "feedbackFailed: " + boom, "observed 3",
        "stepped 1", "request 2", "observed 4"), log);
    assertEquals(List.of(boom), failures);
    assertEquals("nothing goes to the uncaught handler", List.of(), uncaughtHandler.seen);
  }

  @Test
  public void aRequestWhoseEqualsThrowsGoesToTheInspector() {
    RuntimeException boom = new IllegalArgumentException("cannot compare");
    try (Loop<Integer, Integer, Void> loop = inspectedAdder()
        .feedback(Feedback.request((Integer model) -> new ThrowingQuery(model, boom),
            (ThrowingQuery request, Job<Integer> job) -> log.add("request " + request.id)))
        .build()) {
      loop.dispatch(3); // 3: comparing 0 with 3 throws, the request stays 0
      loop.dispatch(1); // 4: request 4
      loop.dispatch(0); // 4: the same request
    }
    assertEquals(Arrays.asList(
        "request 0",
        "stepped 3", "feedbackFailed: " + boom,
        "stepped 1", "request 4",
        "stepped 0"), log);
    assertEquals(List.of(boom), failures);
    assertEquals("nothing goes to the uncaught handler", List.of(), uncaughtHandler.seen);
  }

  @Test
  public void anUnprintableFailureDuringASourcesEmissionReachesTheInspectorAndNotTheSource() {
    // The exception is neither thrown at the source's emission (the Java call in progress)
    // nor replaced by what describing it threw.
    RuntimeException boom = new Unprintable();
    AtomicReference<io.diffuser.Effect<Integer>> emit = new AtomicReference<>();
    io.diffuser.fuser.Fuser<Integer> source = io.diffuser.fuser.Fuser.from(effect -> {
      emit.set(effect);
      return () -> { };
    });
    try (Loop<Integer, Integer, Void> loop = inspectedAdder().build()) {
      loop.add(Feedback.request((Integer model) -> new ThrowingQuery(model, boom),
          (ThrowingQuery request, Job<Integer> job) -> log.add("request " + request.id)));
      loop.connect(source);
      emit.get().run(3); // comparing 0 with 3 throws, the request stays 0
      emit.get().run(1);
    }
    assertEquals(1, failures.size());
    assertTrue("the request's own exception", failures.get(0) == boom); // assertSame would print it
    assertEquals(Arrays.asList(
        "request 0",
        "stepped 3",
        "feedbackFailed: " + Unprintable.class.getName() + " (its toString() threw java.lang.IllegalStateException)",
        "stepped 1", "request 4"), log);
    assertEquals(List.of(), uncaughtHandler.seen);
  }

  /** A request feedback whose request function throws on odd models, logging its work. */
  private Feedback<Integer, Integer> failingOnOddModels(String name) {
    return Feedback.request((Integer model) -> {
      if (model % 2 == 1) {
        throw new IllegalStateException(name + " odd " + model);
      }
      return model;
    }, (Integer request, Job<Integer> job) -> log.add(name + " request " + request));
  }

  @Test
  public void oneFeedbackServesALoopWithAnInspectorAndOneWithout() {
    // Each registration reports where its own loop says, the builder's as Loop.add's.
    Feedback<Integer, Integer> feedback = failingOnOddModels("fb");
    try (Loop<Integer, Integer, Void> inspected = inspectedAdder().feedback(feedback).build();
         Loop<Integer, Integer, Void> plain = Loop.<Integer, Integer>reducer(0, Integer::sum).feedback(feedback).build()) {
      inspected.dispatch(1);
      plain.dispatch(1);
    }
    assertEquals(Arrays.asList("fb request 0", "fb request 0", "stepped 1",
        "feedbackFailed: java.lang.IllegalStateException: fb odd 1"), log);
    assertEquals(1, failures.size());
    assertEquals(1, uncaughtHandler.seen.size());
    assertEquals("fb odd 1", uncaughtHandler.seen.get(0).getMessage());
  }

  @Test
  public void theInspectorMayRemoveTheFeedbackOrDisposeTheLoopOnTheFailure() {
    AtomicReference<Disposable> registration = new AtomicReference<>();
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum).inspector(trace -> {
      if (trace.kind() == LoopTrace.Kind.FEEDBACK_FAILED) {
        log.add("failed " + trace.failure().getMessage());
        registration.get().dispose();
      }
    }).build()) {
      registration.set(loop.add(failingOnOddModels("fb")));
      loop.observe(model -> log.add("observed " + model));
      loop.dispatch(1);
      loop.dispatch(1);
    }
    assertEquals(Arrays.asList("fb request 0", "observed 0", "failed fb odd 1", "observed 1", "observed 2"), log);

    log.clear();
    AtomicReference<Loop<Integer, Integer, Void>> self = new AtomicReference<>();
    Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum).inspector(trace -> {
      log.add(trace.kind().toString());
      if (trace.kind() == LoopTrace.Kind.FEEDBACK_FAILED) {
        self.get().dispose();
      }
    }).feedback(failingOnOddModels("fb")).build();
    self.set(loop);
    loop.observe(model -> log.add("observed " + model));
    loop.dispatch(1);
    assertFalse("the loop is disposed", loop.dispatch(1));
    loop.close();
    assertEquals(Arrays.asList("STARTED", "fb request 0", "observed 0", "STEPPED", "FEEDBACK_FAILED", "DISPOSED"), log);
    assertEquals(List.of(), uncaughtHandler.seen);
  }
}
