package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Arrays;
import java.util.Collections;
import org.junit.Test;

/** UpdateSpec: given, when, then, through the core's loop. */
public class UpdateSpecTest {
  private final UpdateSpec<Integer, String, String> spec = new UpdateSpec<>(LoopTest::update);

  @Test
  public void eventsMeetTheModelThePreviousOneLeft() {
    UpdateSpec<Integer, String, String>.Outcome outcome = spec.given(0).when("1", "5", "1");
    outcome.then(7, "inc->1", "inc->7");
    assertEquals(3, outcome.steps().size());
    assertEquals(Integer.valueOf(1), outcome.steps().get(1).model());
    assertEquals(Integer.valueOf(6), outcome.steps().get(1).nextModel());
    assertEquals(Collections.emptyList(), outcome.steps().get(1).effects());
  }

  @Test
  public void aStepWithoutAModelKeepsTheModel() {
    UpdateSpec<Integer, String, String>.Outcome outcome = spec.given(3).when("silent", "effect:go");
    outcome.then(3, "go");
    assertFalse(outcome.steps().get(0).hasNextModel());
    assertNull(outcome.steps().get(0).nextModel());
  }

  @Test
  public void aFailingUpdateLeavesTheModelAndTheNextEventGoesOn() {
    UpdateSpec<Integer, String, String>.Outcome outcome = spec.given(2).when("fail", "1");
    outcome.thenModel(3);
    Throwable failure = outcome.steps().get(0).failure();
    assertTrue(String.valueOf(failure), failure instanceof IllegalStateException);
    assertEquals("refused", failure.getMessage());
    assertEquals(Arrays.asList("inc->3"), outcome.effects());
    try {
      outcome.thenNoFailure();
      fail("a failed step must be reported");
    } catch (AssertionError expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("fail"));
      assertTrue(expected.getCause() instanceof IllegalStateException);
    }
  }

  @Test
  public void mismatchesSayWhatDiffered() {
    try {
      spec.given(0).when("1").then(2, "inc->1");
      fail("the model differs");
    } catch (AssertionError expected) {
      assertEquals("model: expected 2 but the events left 1", expected.getMessage());
    }
    try {
      spec.given(0).when("1").then(1, "inc->2");
      fail("the effects differ");
    } catch (AssertionError expected) {
      assertEquals("effects: expected [inc->2] but the update returned [inc->1]", expected.getMessage());
    }
  }

  @Test
  public void customChecksSeeTheOutcome() {
    int[] seen = {0};
    spec.given(0).when("1", "1").then(outcome -> seen[0] = outcome.steps().size());
    assertEquals(2, seen[0]);
  }
}
