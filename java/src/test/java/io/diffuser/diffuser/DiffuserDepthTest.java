package io.diffuser.diffuser;

import static io.diffuser.DepthChecks.assertTooDeep;
import static io.diffuser.DepthChecks.onSmallStack;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Test;

/**
 * A tree nests at most {@link Diffuser#MAX_DEPTH} combinators: each composing method
 * refuses to go deeper with an {@link IllegalArgumentException}, width is not limited, and
 * a tree at the bound runs and is released on a thread with a small stack (the bound
 * exists so that the native core's recursion never overflows a thread's stack, which
 * would kill the JVM).
 */
public class DiffuserDepthTest {
  /** One way to put a combinator over a child. */
  private interface Form {
    Diffuser<Integer> over(Diffuser<Integer> child);
  }

  private static final Form MAP = child -> Diffuser.map(x -> x, child);
  private static final Form INTO_ALL = child -> Diffuser.intoAll(child);
  private static final Form INTO_ALWAYS = child -> Diffuser.intoAlways(Collections.singletonList(child));
  private static final Form INTO_WHEN = child -> Diffuser.intoWhen((a, b) -> !a.equals(b), child);

  private static Diffuser<Integer> chain(Form form, int depth, List<Integer> seen) {
    Diffuser<Integer> top = Diffuser.into(seen::add);
    for (int level = 2; level <= depth; level++) top = form.over(top);
    return top;
  }

  @Test
  public void everyComposingMethodRefusesToNestDeeperThanTheBound() {
    for (Form form : Arrays.asList(MAP, INTO_ALL, INTO_ALWAYS, INTO_WHEN)) {
      Diffuser<Integer> deepest = chain(form, Diffuser.MAX_DEPTH, new ArrayList<>());
      assertTooDeep("diffuser", () -> form.over(deepest));
    }
  }

  @Test
  public void aFanOutIsOneDeeperThanItsDeepestChildAndWidthIsFree() {
    List<Integer> seen = new ArrayList<>();
    Diffuser<Integer> deep = chain(MAP, Diffuser.MAX_DEPTH - 1, seen);
    Diffuser<Integer> leaf = Diffuser.into(seen::add);
    Diffuser<Integer> atTheBound = Diffuser.intoAll(leaf, deep);
    // The shallow first child does not hide the deep second one.
    assertTooDeep("diffuser", () -> Diffuser.intoAll(atTheBound));
    atTheBound.run(7);
    assertEquals(Arrays.asList(7, 7), seen);

    List<Diffuser<Integer>> wide = new ArrayList<>();
    for (int i = 0; i < 5000; i++) wide.add(leaf);
    Diffuser<Integer> wideTree = Diffuser.intoAll(wide);
    Diffuser.<Integer, Integer>map(x -> x, wideTree).run(8);
  }

  /** The form that takes the most stack a level, at the bound, on a thread of 256 KB. */
  @Test
  public void aTreeAtTheBoundRunsAndIsReleasedOnASmallStack() throws InterruptedException {
    List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
    assertNull(onSmallStack(256, () -> {
      Diffuser<Integer> deepest = chain(INTO_ALL, Diffuser.MAX_DEPTH, seen);
      deepest.run(1);
      deepest.run(1);
      deepest.run(2);
    }));
    assertEquals(Arrays.asList(1, 2), seen);
    // The tree is unreachable now; the Cleaner releases it on its own thread.
    System.gc();
  }
}
