package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.Test;

/** Runs from several threads are serialized by the core and none is lost. */
public class DiffuserThreadTest {
  private int counter; // deliberately not atomic

  @Test
  public void runsFromManyThreadsAreSerializedAndNoneIsLost() throws Exception {
    Diffuser<Integer> d = Diffuser.intoAlways(v -> counter++);
    int threads = 8;
    int runs = 20_000;
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    List<Throwable> failures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread worker = new Thread(() -> {
        try {
          start.await();
          for (int i = 0; i < runs; i++) {
            d.run(i);
          }
        } catch (Throwable e) {
          synchronized (failures) {
            failures.add(e);
          }
        }
      });
      workers.add(worker);
      worker.start();
    }
    start.countDown();
    for (Thread worker : workers) {
      worker.join();
    }
    assertEquals(new ArrayList<Throwable>(), failures);
    assertEquals(threads * runs, counter);
  }

  @Test
  public void aSharedChildIsSerializedAcrossParents() throws Exception {
    Diffuser<Integer> shared = Diffuser.intoAlways(v -> counter++);
    Diffuser<Integer> a = Diffuser.intoAlways(shared);
    Diffuser<Integer> b = Diffuser.map((Integer v) -> v + 1, shared);
    a.run(0); // both parents have run once: one graph
    b.run(0);
    counter = 0;
    int runs = 20_000;
    Thread ta = new Thread(() -> {
      for (int i = 0; i < runs; i++) {
        a.run(i);
      }
    });
    Thread tb = new Thread(() -> {
      for (int i = 0; i < runs; i++) {
        b.run(i);
      }
    });
    ta.start();
    tb.start();
    ta.join();
    tb.join();
    assertEquals(2 * runs, counter);
  }
}
