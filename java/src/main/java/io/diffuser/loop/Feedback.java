package io.diffuser.loop;

import io.diffuser.Function;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * A side effect driven by a loop's models, which may send events back: Spin's
 * {@code state -> events}. Register one when building a loop ({@link Loop.Builder#feedback})
 * or add it later ({@link Loop#add(Feedback)}).
 *
 * <pre>{@code
 * loop.add(Feedback.react(levels -> levels.left < levels.right ? List.of(INCREASE_LEFT) : List.of()));
 * loop.add(Feedback.request(model -> model.query, (query, job) -> search(query, job::send)));
 * }</pre>
 *
 * <p>{@link #work(Overlap, Executor, FeedbackWork) work} and
 * {@link #request(Function, Overlap, Executor, FeedbackWork) request} take an
 * {@link Overlap} and an optional {@link Executor} to run the work on (Spin's
 * per-feedback scheduler); without one the work runs inside the loop's step. A
 * {@link #react react} always runs inside the step: for a reaction on an executor, use
 * {@code work} with one.
 *
 * <p>A feedback is a description: each loop it is registered with, at each start, makes
 * its own instance of it, so one feedback may serve several loops.
 *
 * <p>A feedback cannot fail its loop. What its work or propagate function throws goes to
 * the thread's uncaught exception handler (which prints it, by default); work that throws
 * is finished, as if it had called {@link Job#finish()}, so that the events it sent stay
 * queued and an overlap strategy waiting for it goes on; a propagate that throws counts
 * as no event. A request function that throws, or a request whose {@code equals} throws,
 * leaves the request as it was; the exception goes to the loop's inspector
 * ({@link LoopTrace.Kind#FEEDBACK_FAILED}), or to that handler if the loop has none.
 *
 * @param <M> the type of models
 * @param <E> the type of events
 */
public final class Feedback<M, E> {
  final Overlap overlap;
  final Executor executor;
  /** For a feedback on models. */
  final FeedbackWork<? super M, E> work;
  /** For a feedback gated by a request: the user's request function, and the work on it. */
  final Function<? super M, ?> request;
  final FeedbackWork<Object, E> requestWork;
  /** For a gear feedback: makes its native description. */
  final java.util.function.LongSupplier gearFeedback;

  private Feedback(Overlap overlap, Executor executor, FeedbackWork<? super M, E> work,
                   Function<? super M, ?> request, FeedbackWork<Object, E> requestWork) {
    this(overlap, executor, work, request, requestWork, null);
  }

  private Feedback(Overlap overlap, Executor executor, FeedbackWork<? super M, E> work,
                   Function<? super M, ?> request, FeedbackWork<Object, E> requestWork,
                   java.util.function.LongSupplier gearFeedback) {
    this.overlap = Objects.requireNonNull(overlap, "overlap");
    this.executor = executor;
    this.work = work;
    this.request = request;
    this.requestWork = requestWork;
    this.gearFeedback = gearFeedback;
  }

  /**
   * Makes the native core's description of this feedback (a {@code dfs_feedback}), which
   * a loop registers at its creation or later; the caller releases it with
   * {@link LoopNative#feedbackRelease}. {@code inspected}: whether that loop has an
   * inspector, which then takes what a request throws (see {@link Bridges#report}).
   */
  long newNative(boolean inspected) {
    if (gearFeedback != null) {
      return gearFeedback.getAsLong();
    }
    long executorHandle = Bridges.executorHandle(executor, Integer.MAX_VALUE);
    try {
      return work != null
          ? LoopNative.feedbackWork(overlap.ordinal(), executorHandle, new Bridges.FeedbackBridge(work))
          : LoopNative.feedbackRequest(reporting(request, inspected), overlap.ordinal(), executorHandle,
              new Bridges.FeedbackBridge(requestWork));
    } finally {
      if (executorHandle != 0) {
        LoopNative.executorRelease(executorHandle);
      }
    }
  }

  /**
   * A feedback that computes events from each model at once; they are queued after the
   * events already queued.
   *
   * @param effect the events of a model
   * @param <M> the type of models
   * @param <E> the type of events
   * @return the feedback
   */
  public static <M, E> Feedback<M, E> react(java.util.function.Function<? super M, ? extends List<? extends E>> effect) {
    Objects.requireNonNull(effect, "effect");
    return work(Overlap.CANCEL_PREVIOUS, null, (model, job) -> {
      for (E event : effect.apply(model)) {
        job.send(event);
      }
      job.finish();
    });
  }

  /**
   * A feedback that starts work on each model, cancelling the work in progress.
   *
   * @param work the work
   * @param <M> the type of models
   * @param <E> the type of events
   * @return the feedback
   */
  public static <M, E> Feedback<M, E> work(FeedbackWork<? super M, E> work) {
    return work(Overlap.CANCEL_PREVIOUS, null, work);
  }

  /**
   * A feedback that starts work on each model.
   *
   * @param overlap what to do with the work in progress
   * @param executor where the work runs; {@code null}: inside the loop's step
   * @param work the work
   * @param <M> the type of models
   * @param <E> the type of events
   * @return the feedback
   */
  public static <M, E> Feedback<M, E> work(Overlap overlap, Executor executor, FeedbackWork<? super M, E> work) {
    return new Feedback<>(overlap, executor, Objects.requireNonNull(work, "work"), null, null);
  }

  /**
   * A feedback gated by a request: work starts when the model's request changes
   * ({@link Objects#equals}) to a non-null value, and is cancelled when it becomes
   * {@code null}; a new request cancels the work of the previous one.
   *
   * @param request the request of a model, or {@code null} for none
   * @param work the work on a request
   * @param <M> the type of models
   * @param <E> the type of events
   * @param <R> the type of requests
   * @return the feedback
   */
  public static <M, E, R> Feedback<M, E> request(Function<? super M, ? extends R> request, FeedbackWork<? super R, E> work) {
    return request(request, Overlap.CANCEL_PREVIOUS, null, work);
  }

  /**
   * A feedback gated by a request, as {@link #request(Function, FeedbackWork)}, with an
   * overlap strategy and an executor.
   *
   * @param request the request of a model, or {@code null} for none
   * @param overlap what to do with the work of the previous request
   * @param executor where the work runs; {@code null}: inside the loop's step
   * @param work the work on a request
   * @param <M> the type of models
   * @param <E> the type of events
   * @param <R> the type of requests
   * @return the feedback
   */
  @SuppressWarnings("unchecked")
  public static <M, E, R> Feedback<M, E> request(Function<? super M, ? extends R> request, Overlap overlap,
                                                 Executor executor, FeedbackWork<? super R, E> work) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(work, "work");
    FeedbackWork<Object, E> unwrapped =
        (value, job) -> ((FeedbackWork<Object, E>) work).start(Requested.value(value), job);
    return new Feedback<>(overlap, executor, null, request, unwrapped);
  }

  /**
   * {@code request} as the core calls it, for a loop with an inspector or without: what
   * it, or a request's {@code equals}, throws is {@linkplain Bridges#report reported}, and
   * only fails the core's call.
   */
  private static <M> Function<M, Object> reporting(Function<? super M, ?> request, boolean inspected) {
    return model -> {
      Object value;
      try {
        value = request.apply(model);
      } catch (Throwable failure) {
        throw Bridges.report(failure, inspected);
      }
      return Requested.of(value, inspected);
    };
  }

  /**
   * A request as the core keeps and compares it: the core calls {@code old.equals(new)}
   * through the glue, which would keep what that {@code equals} throws for a Java caller
   * that a loop's step does not have, so that the failure would go nowhere. This holder's
   * {@code equals} reports it, as the request function's own failures are, and fails the
   * comparison (the request stays as it was). The same object is the same request, with
   * no call of its {@code equals}, as the glue decides. Requests of the classes whose
   * equality the glue decides without calling {@code equals} (strings, boxed primitives,
   * enums: theirs cannot throw) and {@code null} are not wrapped, and keep that fast
   * comparison.
   */
  private static final class Requested {
    final Object value;
    /** Whether the loop has an inspector (see {@link Bridges#report}). */
    final boolean inspected;

    private Requested(Object value, boolean inspected) {
      this.value = value;
      this.inspected = inspected;
    }

    /** {@code value} as the core gets it, for a loop with an inspector or without. */
    static Object of(Object value, boolean inspected) {
      if (value == null || value instanceof Enum) {
        return value;
      }
      Class<?> type = value.getClass();
      boolean comparedNatively = type == String.class || type == Integer.class || type == Long.class
          || type == Double.class || type == Float.class || type == Short.class || type == Byte.class
          || type == Character.class || type == Boolean.class;
      return comparedNatively ? value : new Requested(value, inspected);
    }

    /** The request the core handed back, as the work gets it. */
    static Object value(Object kept) {
      return kept instanceof Requested ? ((Requested) kept).value : kept;
    }

    @Override
    public boolean equals(Object other) {
      Object request = value(other);
      if (value == request) {
        return true; // as Objects.equals, and the glue for what it is handed unwrapped
      }
      try {
        return value.equals(request);
      } catch (Throwable failure) {
        throw Bridges.report(failure, inspected);
      }
    }

    @Override
    public int hashCode() {
      return value.hashCode();
    }

    @Override
    public String toString() {
      return String.valueOf(value);
    }
  }

  /**
   * A feedback that pushes into {@code gear} the gear event {@code propagate} makes of
   * each model, if any (Spin's {@code Feedback(attachedTo:propagating:)} from states).
   * It runs inside the loop's step; an exception it throws counts as no event (and goes
   * to the thread's uncaught exception handler).
   *
   * @param gear the gear
   * @param propagate the gear event of a model, or {@code null} for none
   * @param <M> the type of models
   * @param <E> the type of events
   * @param <G> the type of gear events
   * @return the feedback
   */
  public static <M, E, G> Feedback<M, E> pushing(Gear<G> gear, Function<? super M, ? extends G> propagate) {
    return gearFeedback(gear, propagate, true);
  }

  /**
   * A feedback that turns the gear events of {@code gear} into events of the loop, while
   * it runs (Spin's {@code Feedback(attachedTo:propagating:)} from gear events). The
   * events arrive in the loop's queue like dispatched ones; an exception {@code
   * propagate} throws counts as no event (and goes to the thread's uncaught exception
   * handler). {@code propagate} runs on the thread that sends into the gear, as a
   * callback of the loop's run (a stop or dispose from it behaves as from any callback);
   * a gear event sent once the run has ended is dropped unseen. With the caller's
   * executor, an event {@code propagate} makes while the loop is idle is handled on the
   * sending thread once {@code propagate} has returned, outside the gear's lock and
   * before the gear moves on to its next loop; inside a delivery of a loop's source (or
   * another gear's {@code propagate}), once the outermost one is over. (While the loop
   * drains, the event waits its turn in the queue, as a dispatched one does.)
   *
   * @param gear the gear
   * @param propagate the event of a gear event, or {@code null} for none
   * @param <M> the type of models
   * @param <E> the type of events
   * @param <G> the type of gear events
   * @return the feedback
   */
  public static <M, E, G> Feedback<M, E> attached(Gear<G> gear, Function<? super G, ? extends E> propagate) {
    return gearFeedback(gear, propagate, false);
  }

  private static <M, E> Feedback<M, E> gearFeedback(Gear<?> gear, Function<?, ?> propagate, boolean pushing) {
    Objects.requireNonNull(gear, "gear");
    Objects.requireNonNull(propagate, "propagate");
    Bridges.PropagateBridge bridge = new Bridges.PropagateBridge(propagate);
    java.util.function.LongSupplier make = () -> {
      try {
        return pushing ? LoopNative.feedbackPushing(gear.handle, bridge)
            : LoopNative.feedbackAttached(gear.handle, bridge);
      } finally {
        java.lang.ref.Reference.reachabilityFence(gear);
      }
    };
    return new Feedback<>(Overlap.CANCEL_PREVIOUS, null, null, null, null, make);
  }
}
