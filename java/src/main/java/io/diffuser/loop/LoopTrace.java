package io.diffuser.loop;

import java.util.List;

/**
 * One thing a {@link LoopInspector} sees. Which parts are set depends on the
 * {@link Kind}; the others are {@code null}.
 *
 * @param <M> the type of models
 * @param <E> the type of events
 * @param <F> the type of effects
 */
public final class LoopTrace<M, E, F> {
  /** What happened. */
  public enum Kind {
    /** A run started: {@link #model()} is its first model, {@link #effects()} its start effects. */
    STARTED,
    /** The update returned: {@link #event()}, {@link #model()} (before), {@link #nextModel()}, {@link #effects()}. */
    STEPPED,
    /** The update failed: {@link #event()}, {@link #model()} (kept), {@link #error()}. */
    FAILED,
    /** An accepted event never reached the update: {@link #event()}, {@link #reason()}. */
    DROPPED,
    /** A handler failed: {@link #effect()}, {@link #error()}. */
    EFFECT_FAILED,
    /** An observer failed: {@link #error()}. */
    OBSERVER_FAILED,
    /** The loop stopped with {@link #model()}. */
    STOPPED,
    /** The loop was disposed with {@link #model()}. */
    DISPOSED,
    /**
     * A source of a fuser given to {@link Loop#connect} refused to connect (its
     * {@code connect} threw) when the loop connected it, on the loop's turn after the call
     * or at a start: {@link #error()}, {@link #failure()}. Nothing of that fuser is
     * connected for the run; the next start tries again.
     */
    SOURCE_FAILED,
    /**
     * A request feedback's request function, or a request's {@code equals}, threw
     * ({@link Feedback#request}) on a model it heard: one just published, or the current
     * one when it was {@linkplain Loop#add added} to a running loop: {@link #error()},
     * {@link #failure()}. That feedback's request stays as it was; the loop goes on.
     */
    FEEDBACK_FAILED
  }

  /** Why an accepted event never reached the update. */
  public enum DropReason {
    /** The job that sent it was cancelled first. */
    CANCELLED_WORK,
    /** A newer event with the same coalescing key replaced it. */
    COALESCED,
    /** The loop stopped first. */
    STOPPED,
    /** The loop was disposed first. */
    DISPOSED
  }

  private final Kind kind;
  private final E event;
  private final M model;
  private final boolean hasNextModel;
  private final M nextModel;
  private final List<F> effects;
  private final F effect;
  private final DropReason reason;
  private final String error;
  private final Throwable failure;

  LoopTrace(Kind kind, E event, M model, boolean hasNextModel, M nextModel, List<F> effects, F effect,
            DropReason reason, String error, Throwable failure) {
    this.kind = kind;
    this.event = event;
    this.model = model;
    this.hasNextModel = hasNextModel;
    this.nextModel = nextModel;
    this.effects = effects;
    this.effect = effect;
    this.reason = reason;
    this.error = error;
    this.failure = failure;
  }

  /**
   * What happened.
   *
   * @return the kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * The event.
   *
   * @return the event, for STEPPED, FAILED and DROPPED
   */
  public E event() {
    return event;
  }

  /**
   * The model.
   *
   * @return the model, for STARTED, STEPPED, FAILED, STOPPED and DISPOSED
   */
  public M model() {
    return model;
  }

  /**
   * Whether the step made a new model.
   *
   * @return true if it did (STEPPED only)
   */
  public boolean hasNextModel() {
    return hasNextModel;
  }

  /**
   * The step's new model.
   *
   * @return the new model, if {@link #hasNextModel()}
   */
  public M nextModel() {
    return nextModel;
  }

  /**
   * The effects of a start or a step.
   *
   * @return the effects (empty for other kinds)
   */
  public List<F> effects() {
    return effects;
  }

  /**
   * The effect a handler failed on.
   *
   * @return the effect, for EFFECT_FAILED
   */
  public F effect() {
    return effect;
  }

  /**
   * Why the event was dropped.
   *
   * @return the reason, for DROPPED
   */
  public DropReason reason() {
    return reason;
  }

  /**
   * The failure's message: for an exception of a Java callback ({@link #failure()}), its
   * {@code toString()}, character for character.
   *
   * @return the message, for FAILED, EFFECT_FAILED, OBSERVER_FAILED, SOURCE_FAILED and
   *     FEEDBACK_FAILED
   */
  public String error() {
    return error;
  }

  /**
   * The exception a Java callback threw, if that is what failed.
   *
   * @return the exception, or {@code null}
   */
  public Throwable failure() {
    return failure;
  }

  @Override
  public String toString() {
    switch (kind) {
      case STARTED:
        return "started " + model + " " + effects;
      case STEPPED:
        return "stepped " + event + " on " + model + " -> " + (hasNextModel ? String.valueOf(nextModel) : "no model")
            + " " + effects;
      case FAILED:
        return "failed " + event + " on " + model + ": " + error;
      case DROPPED:
        return "dropped " + event + " " + reason;
      case EFFECT_FAILED:
        return "effectFailed " + effect + ": " + error;
      case OBSERVER_FAILED:
        return "observerFailed: " + error;
      case STOPPED:
        return "stopped " + model;
      case SOURCE_FAILED:
        return "sourceFailed: " + error;
      case FEEDBACK_FAILED:
        return "feedbackFailed: " + error;
      default:
        return "disposed " + model;
    }
  }
}
