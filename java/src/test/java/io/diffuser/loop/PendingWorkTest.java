package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * Work an executor still holds when its loop is disposed: run afterwards, it calls none
 * of the loop's callbacks and lets go of what it held (see the executors paragraph of
 * {@link Loop}).
 */
public class PendingWorkTest {
  @Test
  public void workRunAfterTheLoopIsDisposedCallsNothingAndLetsGoOfItsEffect() throws Exception {
    ManualExecutor steps = new ManualExecutor();
    ManualExecutor handlers = new ManualExecutor();
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<WeakReference<Object>> effect = new AtomicReference<>();
    Loop<Integer, String, Object> loop = Loop.builder(0, (Integer model, String event) -> {
          log.add("update " + event);
          Object made = new Object();
          effect.set(new WeakReference<>(made));
          return Next.<Integer, Object>next(model + 1, made);
        })
        .executor(steps)
        .handler(handlers, (Object made, Job<String> job) -> log.add("handler"))
        .build();
    steps.runAll(); // the start
    loop.dispatch("a");
    steps.runAll(); // its effect goes to the handlers' executor
    loop.dispatch("b");
    assertEquals(1, handlers.pending());
    assertEquals(1, steps.pending());

    loop.dispose();
    assertEquals(1, handlers.runAll());
    assertEquals(1, steps.runAll());

    assertEquals(Arrays.asList("update a"), log);
    for (int i = 0; i < 50 && effect.get().get() != null; i++) {
      System.gc();
      Thread.sleep(5);
    }
    assertNull("the effect the handler's work held", effect.get().get());
  }
}
