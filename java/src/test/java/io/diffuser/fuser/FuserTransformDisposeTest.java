package io.diffuser.fuser;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * Fuser.connect promises that once {@code dispose()} has returned neither the
 * connection's transforms nor its effect run again. A transform that disposes its own
 * connection gets {@code dispose()} back at once; the transforms above it must not run
 * for that event any more.
 */
public class FuserTransformDisposeTest {
  @Test(timeout = 30_000)
  public void noOuterTransformRunsAfterAnInnerTransformDisposedTheConnection() {
    TestSource<Integer> source = new TestSource<>();
    List<String> log = new ArrayList<>();
    Disposable[] connection = {null};
    boolean[] disposed = {false};
    Fuser<Integer> fuser = Fuser.extract((Integer v) -> {
      log.add(disposed[0] ? "outer after dispose" : "outer");
      return v;
    }, Fuser.extract((Integer v) -> {
      log.add("inner");
      connection[0].dispose();
      disposed[0] = true;
      return v;
    }, Fuser.from(source)));
    connection[0] = fuser.connect(v -> log.add("effect " + v));
    source.emit(1);
    assertEquals(List.of("inner"), log);
    assertEquals(0, source.effects.size());
  }
}
