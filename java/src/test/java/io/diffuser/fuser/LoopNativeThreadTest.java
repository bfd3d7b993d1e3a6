package io.diffuser.fuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.diffuser.loop.Feedback;
import io.diffuser.loop.Job;
import io.diffuser.loop.Loop;
import io.diffuser.loop.LoopTrace;
import io.diffuser.loop.Next;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.Test;

/**
 * A loop fed by a source that emits from a thread the JVM did not start: each of the
 * loop's callbacks attaches that thread anew, and the inspector still gets the failures
 * themselves. In this package for {@link NativeThreads}, the emitting thread's helper.
 */
public class LoopNativeThreadTest {
  @Test
  public void aLoopFedFromANativeThreadShowsItsInspectorTheFailuresThemselves() {
    // Each callback attaches that thread anew (another Thread object): the inspector's
    // trace of a failure still gets the exception the update, handler or observer threw.
    RuntimeException update = new IllegalStateException("update failed");
    RuntimeException handler = new IllegalStateException("handler failed");
    RuntimeException observer = new IllegalStateException("observer failed");
    TestSource<Integer> source = new TestSource<>();
    List<LoopTrace<Integer, Integer, Integer>> failures = new CopyOnWriteArrayList<>();
    try (Loop<Integer, Integer, Integer> loop = Loop
        .<Integer, Integer, Integer>builder(0, (model, event) -> {
          if (event == 1) throw update;
          return Next.next(model + event, event);
        })
        .handler((effect, job) -> {
          if (effect == 2) throw handler;
        })
        .inspector(trace -> {
          if (trace.error() != null) failures.add(trace);
        })
        .build()) {
      loop.observe(model -> {
        if (model == 5) throw observer;
      });
      loop.connect(Fuser.from(source));
      int[] statuses = NativeThreads.emitOnNativeThread(source.effects.get(0), new Object[] {1, 2, 3});
      assertEquals(Arrays.asList(0, 0, 0, 1), Arrays.asList(statuses[0], statuses[1], statuses[2], statuses[3]));
    }
    assertEquals(3, failures.size());
    assertEquals(Arrays.asList(update, handler, observer),
        Arrays.asList(failures.get(0).failure(), failures.get(1).failure(), failures.get(2).failure()));
  }

  @Test
  public void aLoopFedFromANativeThreadShowsItsInspectorTheRequestsFailureItself() {
    // The request function and the inspector's trace each attach the thread anew.
    RuntimeException request = new IllegalStateException("request failed");
    TestSource<Integer> source = new TestSource<>();
    List<LoopTrace<Integer, Integer, Void>> failures = new CopyOnWriteArrayList<>();
    List<Integer> requests = new CopyOnWriteArrayList<>();
    try (Loop<Integer, Integer, Void> loop = Loop
        .<Integer, Integer>reducer(0, Integer::sum)
        .feedback(Feedback.request((Integer model) -> {
          if (model == 3) throw request;
          return model;
        }, (Integer r, Job<Integer> job) -> requests.add(r)))
        .inspector(trace -> {
          if (trace.error() != null) failures.add(trace);
        })
        .build()) {
      loop.connect(Fuser.from(source));
      int[] statuses = NativeThreads.emitOnNativeThread(source.effects.get(0), new Object[] {1, 2, 3});
      assertEquals(Arrays.asList(0, 0, 0, 1), Arrays.asList(statuses[0], statuses[1], statuses[2], statuses[3]));
    }
    assertEquals(1, failures.size());
    assertEquals(LoopTrace.Kind.FEEDBACK_FAILED, failures.get(0).kind());
    assertTrue("the request's own exception", failures.get(0).failure() == request);
    assertEquals(Arrays.asList(0, 1, 6), requests);
  }
}
