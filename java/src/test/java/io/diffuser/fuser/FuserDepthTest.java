package io.diffuser.fuser;

import static io.diffuser.DepthChecks.assertTooDeep;
import static io.diffuser.DepthChecks.onSmallStack;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.loop.Loop;
import io.diffuser.loop.Next;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Test;

/**
 * A fuser nests at most {@link Fuser#MAX_DEPTH} combinators: each composing method refuses
 * to go deeper with an {@link IllegalArgumentException}, and a fuser at the bound
 * delivers an event and is released on a thread with a small stack (the bound exists so
 * that the native core's recursion never overflows a thread's stack, which would kill
 * the JVM).
 */
public class FuserDepthTest {
  /** One way to put a combinator over a child. */
  private interface Form {
    Fuser<Integer> over(Fuser<Integer> child);
  }

  private static final Form FROM_ALL = child -> Fuser.fromAll(Collections.singletonList(child));
  private static final Form EXTRACT = child -> Fuser.extract((Integer x) -> x + 1, child);
  private static final Form EXTRACT_CONSTANT = child -> Fuser.extractConstant(7, child);
  private static final Form EXTRACT_UNLESS_NULL = child -> Fuser.extractUnlessNull((Integer x) -> x, child);

  private static Fuser<Integer> chain(Form form, int depth, TestSource<Integer> source) {
    Fuser<Integer> top = Fuser.from(source);
    for (int level = 2; level <= depth; level++) top = form.over(top);
    return top;
  }

  @Test
  public void theBoundIsTheDiffusersBound() {
    assertEquals(Diffuser.MAX_DEPTH, Fuser.MAX_DEPTH);
  }

  @Test
  public void everyComposingMethodRefusesToNestDeeperThanTheBound() {
    for (Form form : Arrays.asList(FROM_ALL, EXTRACT, EXTRACT_CONSTANT, EXTRACT_UNLESS_NULL)) {
      Fuser<Integer> deepest = chain(form, Fuser.MAX_DEPTH, new TestSource<>());
      assertTooDeep("fuser", () -> form.over(deepest));
    }
  }

  /** A fan-in at the bound, on a thread of 256 KB. */
  @Test
  public void aFuserAtTheBoundDeliversAndIsReleasedOnASmallStack() throws InterruptedException {
    List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
    assertNull(onSmallStack(256, () -> {
      TestSource<Integer> source = new TestSource<>();
      Disposable connection = chain(FROM_ALL, Fuser.MAX_DEPTH, source).connect(seen::add);
      source.emit(5);
      connection.dispose();
    }));
    assertEquals(Collections.singletonList(5), seen);
  }

  /** A loop connects a fuser at the bound: it adds no level of its own. */
  @Test
  public void aLoopConnectsAFuserAtTheBound() {
    TestSource<Integer> source = new TestSource<>();
    Fuser<Integer> deepest = chain(FROM_ALL, Fuser.MAX_DEPTH, source);
    try (Loop<Integer, Integer, Integer> loop =
        Loop.<Integer, Integer, Integer>builder(0, (model, event) -> Next.next(event)).build()) {
      Disposable connection = loop.connect(deepest);
      source.emit(42);
      assertEquals(Integer.valueOf(42), loop.model());
      connection.dispose();
    }
  }
}
