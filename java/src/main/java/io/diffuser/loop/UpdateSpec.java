package io.diffuser.loop;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A test of an update alone: given a model, when events happen, then this model and these
 * effects (Mobius's {@code UpdateSpec}).
 *
 * <pre>{@code
 * UpdateSpec<Login, Event, Effect> spec = new UpdateSpec<>(update);
 * spec.given(new Login("", false))
 *     .when(Event.LOGIN_CLICKED)
 *     .then(new Login("", true), Effect.LOGIN);
 * }</pre>
 *
 * <p>The events go through a loop of the native core, as in an app: each meets the model
 * the previous one left, an update that throws leaves the model as it was and the next
 * event goes on from it. No effect runs: the spec only reads what each step returned.
 * The checks throw {@link AssertionError} with a message that says what differed, so any
 * test framework reports them.
 *
 * @param <M> the type of models
 * @param <E> the type of events
 * @param <F> the type of effects
 */
public final class UpdateSpec<M, E, F> {
  private final Update<M, E, F> update;

  /**
   * A spec of {@code update}.
   *
   * @param update the update under test
   */
  public UpdateSpec(Update<M, E, F> update) {
    this.update = Objects.requireNonNull(update, "update");
  }

  /**
   * The model the events will start from.
   *
   * @param model the model
   * @return the next part of the spec
   */
  public Given given(M model) {
    return new Given(model);
  }

  /** A spec with its first model. */
  public final class Given {
    private final M model;

    Given(M model) {
      this.model = model;
    }

    /**
     * Dispatches {@code events} in order into a loop that starts from the given model.
     *
     * @param events the events
     * @return what each step did
     */
    @SafeVarargs
    public final Outcome when(E... events) {
      List<E> list = new ArrayList<>(events.length);
      for (E event : events) {
        list.add(event);
      }
      return when(list);
    }

    /**
     * Dispatches {@code events} in order into a loop that starts from the given model.
     *
     * @param events the events
     * @return what each step did
     */
    public Outcome when(List<? extends E> events) {
      List<LoopTrace<M, E, F>> steps = new ArrayList<>();
      LoopInspector<M, E, F> recorder = trace -> {
        if (trace.kind() == LoopTrace.Kind.STEPPED || trace.kind() == LoopTrace.Kind.FAILED) {
          steps.add(trace);
        }
      };
      try (Loop<M, E, F> loop = Loop.builder(model, update).inspector(recorder).build()) {
        for (E event : events) {
          loop.tryDispatch(event);
        }
        return new Outcome(steps, loop.model());
      }
    }
  }

  /** What the events did: each step, and the model they left. */
  public final class Outcome {
    private final List<LoopTrace<M, E, F>> steps;
    private final M model;

    Outcome(List<LoopTrace<M, E, F>> steps, M model) {
      this.steps = Collections.unmodifiableList(steps);
      this.model = model;
    }

    /**
     * Every step, in order: what the loop's inspector saw of each event, a
     * {@link LoopTrace.Kind#STEPPED} or {@link LoopTrace.Kind#FAILED} trace (its model is
     * the one the event met).
     *
     * @return the steps
     */
    public List<LoopTrace<M, E, F>> steps() {
      return steps;
    }

    /** @return the model after the last event */
    public M model() {
      return model;
    }

    /** @return every effect of every step, in order */
    public List<F> effects() {
      List<F> all = new ArrayList<>();
      for (LoopTrace<M, E, F> step : steps) {
        all.addAll(step.effects());
      }
      return all;
    }

    /**
     * Checks the model the events left and every effect they returned, in order.
     *
     * @param model the expected model
     * @param effects the expected effects
     * @return this outcome, for more checks
     * @throws AssertionError if either differs, or a step failed
     */
    @SafeVarargs
    public final Outcome then(M model, F... effects) {
      thenNoFailure();
      thenModel(model);
      List<F> expected = new ArrayList<>(effects.length);
      for (F effect : effects) {
        expected.add(effect);
      }
      if (!expected.equals(effects())) {
        throw new AssertionError("effects: expected " + expected + " but the update returned " + effects());
      }
      return this;
    }

    /**
     * Checks the model the events left.
     *
     * @param model the expected model
     * @return this outcome, for more checks
     * @throws AssertionError if it differs
     */
    public Outcome thenModel(M model) {
      if (!Objects.equals(model, this.model)) {
        throw new AssertionError("model: expected " + model + " but the events left " + this.model);
      }
      return this;
    }

    /**
     * Checks that no update threw.
     *
     * @return this outcome, for more checks
     * @throws AssertionError naming the first event whose update threw
     */
    public Outcome thenNoFailure() {
      for (LoopTrace<M, E, F> step : steps) {
        if (step.kind() == LoopTrace.Kind.FAILED) {
          Throwable cause = step.failure();
          AssertionError error = new AssertionError("the update failed on " + step.event() + ": "
              + (cause != null ? cause : step.error()));
          if (cause != null) {
            error.initCause(cause);
          }
          throw error;
        }
      }
      return this;
    }

    /**
     * Runs checks of your own.
     *
     * @param checks the checks
     * @return this outcome, for more checks
     */
    public Outcome then(Consumer<? super Outcome> checks) {
      checks.accept(this);
      return this;
    }
  }
}
