// One file although over 400 lines: the class comment is the loop's whole contract, every
// method is a short call into the core described against it, and Builder holds the
// options of that same contract.
package io.diffuser.loop;

import io.diffuser.Effect;
import io.diffuser.Function;
import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.internal.Handles;
import io.diffuser.internal.Native;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

/**
 * A model, the events that change it, and the effects and feedbacks around it: the loop
 * between a {@link Fuser} (events in) and a {@link Diffuser} (the model out).
 *
 * <pre>{@code
 * try (Loop<Login, LoginEvent, LoginEffect> loop = Loop.builder(new Login(), Login::update)
 *     .handler((effect, job) -> api.login(effect, result -> job.send(new LoggedIn(result))))
 *     .build()) {
 *   loop.observe(Login::title, title::setText);   // distinct titles, the current one first
 *   loop.connect(buttonEvents);                    // sources, while the loop runs
 *   loop.dispatch(LoginClicked.INSTANCE);          // from any thread
 * }
 * }</pre>
 *
 * <p>A {@code Loop} is a handle to the native core's loop, the one the Swift and C APIs
 * use; this class adds no behaviour.
 *
 * <p><b>Order.</b> One event at a time, first in first out. Each step: the update; its
 * {@link LoopTrace.Kind#STEPPED STEPPED} trace to the inspector ({@link #model()} still
 * returns the model the update was given); the model stored ({@link #model()} returns
 * it from then on); the model published to observers and feedbacks in the order they
 * were added; then each effect handed to every handler (effects in order, handlers in
 * the order added), before the next event starts. A step without a new model publishes
 * nothing. A start is a step too: its {@link LoopTrace.Kind#STARTED STARTED} trace (on a
 * restart {@link #model()} still returns the kept model, not the one the restart gave);
 * the model stored; the model published to the observers and feedbacks added by then;
 * the start effects handed to the handlers; the sources connected.
 *
 * <p><b>Threads.</b> {@link #dispatch} may be called from any thread, also from inside
 * the loop's own callbacks: an event dispatched during a step is queued and handled
 * after it, never inside it, and {@code dispatch} never waits for a step. Without an
 * executor, the thread that dispatches into an idle loop runs the steps before
 * {@code dispatch} returns (so may {@link #start()} and the registrations, which are
 * queued the same way, and a connected source's thread, once the source's connection
 * has delivered the event and let go of its lock: another thread's emission meanwhile
 * returns at once, its event handled by that drain); any {@link Executor} may run them instead (a UI thread's, a
 * {@link ManualExecutor} in tests). The loop never loses work to an executor: work it
 * refuses ({@link java.util.concurrent.RejectedExecutionException}) runs on the thread
 * that handed it over, and so does work whose {@code execute} threw anything else, which
 * goes to that thread's uncaught exception handler first. The work runs once either way.
 * Work an executor never runs is never freed: until it runs, a piece of work holds native
 * memory and, for a handler, its effect and job. So an executor that shuts down (the
 * tasks {@code shutdownNow()} returns, a {@link ManualExecutor} a test is done with) runs
 * the work it still holds once the loop is disposed, when that work does nothing but free
 * what it holds.
 * An executor may run work at once ({@code Runnable::run}): the rest of the queue handed
 * back after {@code stepsPerRun} entries then returns at once, and the drain already
 * running on that thread goes on with it once {@code execute} returns, so that a long
 * queue does not take a stack frame per piece of work. A stop or dispose made inside
 * {@code execute} after such work returned comes from that drain, as one made inside a
 * step: it does not wait, and the queued events are dropped.
 *
 * <p><b>Lifecycle.</b> The loop starts when built (unless {@link Builder#manualStart()}).
 * {@link #stop()} ends the run and keeps the model and the registrations;
 * {@link #start()} starts a new run from the kept model (or from what
 * {@link Builder#restart} makes of it), publishing it again and reconnecting the
 * sources. {@link #dispose()} (or {@link #close()}) ends it for good: a registration on a disposed loop ({@link #observe}, {@link #render}, {@link #connect},
 * {@link #add}) returns a {@code Disposable} and does nothing (none of its callbacks is
 * ever called), and {@link #record} records nothing.
 * Both refuse events from the moment they are called; handle the events accepted before
 * them when the running thread can be waited for (always without an executor); cancel
 * every {@link Job}; disconnect the sources; and once they return, no callback of that
 * run starts. Called from a callback, they skip the rest of that step (from inside the
 * update: its result is dropped, so no model is stored, nothing is published or handled,
 * and the journal does not record the event); a handler or observer that throws after
 * stopping or disposing its loop is reported after the STOPPED or DISPOSED trace, and so
 * are the drops a stop still reports when a callback of it (the inspector hearing a drop)
 * disposes the loop. A callback must not wait for the thread that stops or disposes its
 * loop. A stop or dispose of another loop from a callback waits for that loop's
 * callbacks, so it is such a wait when one of them stops or disposes this loop: two loops
 * whose callbacks stop or dispose each other may deadlock, as two locks taken in opposite
 * orders do.
 *
 * <p><b>Closes that meet.</b> A stop or dispose made while another thread's is under way
 * returns once that one has (a second dispose too), except from a callback of the run,
 * from the drain's step or from the inspector, which return at once and leave the work to
 * it (a dispose then follows that stop); one made once the loop is stopped or disposed
 * waits for no callback. One that waits for the drain gives way to a stop or dispose from
 * that drain's step, and returns once that step and the run's callbacks on other threads
 * have ended. A callback that waits for another thread's callback (a handler disposing an
 * observer or feedback that the drain is calling, or reporting its failure while the
 * inspector runs) is not waited for by a stop or dispose from that other callback, which
 * would wait for itself: its trace or its dispose comes after that stop, and may still be
 * in progress when a close that met that stop returns. A stop or dispose from the
 * inspector on a thread other than the drain's does not wait for the drain, whose traces
 * need the inspector; nor, while that drain waits for the inspector, for the handler the
 * drain runs inside (a handler whose {@code send} into the idle loop, on the caller's
 * executor, drains it on the handler's thread). It drops the events not yet handled, and
 * returns while the drain's callback in progress, if any, and that handler finish. A stop
 * or dispose from a {@link Feedback#attached} feedback's {@code propagate} does the same
 * while the loop's turn that removes that feedback waits for the {@code propagate} to
 * return. A gear event that a {@code propagate} turns into an event of the idle loop is
 * drained once the {@code propagate} has returned, outside the gear's lock: a stop or
 * dispose from the inspector, which disconnects the gear, does not wait for that drain. A
 * {@code propagate} that itself drains the loop (its {@code dispatch} into the idle loop,
 * with the caller's executor) is waited for: a stop or dispose from the inspector while
 * that drain waits for the inspector deadlocks.
 *
 * <p><b>Memory.</b> Until it is disposed, a loop holds its update, handlers, observers,
 * feedbacks, restart, inspector and executors, and the fusers it connects, whoever else
 * holds them: like a running thread, a running loop is not collected while its callbacks
 * reach it (a render effect of a screen that holds the loop), so dispose it when its
 * screen goes. A loop that nothing reaches is disposed when it is collected. A disposed
 * loop lets go of its observers, feedbacks and fusers, and holds the rest only for as
 * long as the {@code Loop} object is reachable: it is collected like any object, also
 * when its callbacks reach it, and its native record (about 2 KB) goes with it.
 *
 * <p><b>Errors.</b> An update, a handler or an observer that throws changes nothing (a
 * failed update keeps the model); the inspector sees the exception and the loop goes on.
 * So does a source that throws from {@code connect} when the loop connects it
 * ({@link LoopTrace.Kind#SOURCE_FAILED}): nothing of its fuser is connected until the
 * next start; and a request feedback whose request function, or a request's {@code
 * equals}, throws ({@link LoopTrace.Kind#FEEDBACK_FAILED}): its request stays as it was.
 * The inspector is the only place these exceptions go: a loop built without one drops
 * them (a feedback's go to the thread's uncaught exception handler, see
 * {@link Feedback}), so give every loop an inspector that logs failures
 * ({@link LoopTrace#failure()}, {@link LoopTrace#error()}). An exception a source's
 * {@link Disposable#dispose()} throws as {@link #stop()} or {@link #dispose()}
 * disconnects it is thrown by that call once it is complete (the loop is stopped or
 * disposed, every other source disconnected; later such exceptions are suppressed by
 * the first), as disposing a {@link Fuser#connect} connection throws it. A close that
 * leaves its work to another (see <b>Closes that meet</b>) leaves that exception to it
 * too. A loop disposed because it was collected hands it to the uncaught exception
 * handler of the thread that disposes it (a {@link Cleaner}'s). Where the loop's turn
 * disconnects a source inside a call that does not throw it ({@link #dispatch}, a job's
 * {@code send}, {@link #start}, {@link #connect} and the other registering calls, an
 * executor's work: a turn that finishes connecting sources whose connection was disposed
 * meanwhile, say), the exception is added as suppressed to a refusal that call keeps
 * for the inspector (another source of the same fuser that refused to connect), and
 * otherwise goes to the uncaught exception handler of that call's thread. Inside a
 * source's emission, the emitter gets it, as from a connection disposed by its own
 * effect, unless a refusal takes it.
 *
 * @param <M> the type of models
 * @param <E> the type of events
 * @param <F> the type of effects
 */
public final class Loop<M, E, F> implements AutoCloseable {
  private final long handle;
  private final Cleaner.Cleanable cleanable;
  /**
   * The connections not yet disposed: each holds its fuser, whose native nodes hold their
   * user objects by weak references (see {@code Fuser}). The loop's update bridge holds
   * the set too, so that the native loop keeps the fusers for as long as it may connect
   * them, also after this object became unreachable and before it is disposed.
   */
  private final Set<Connection> connections;
  /**
   * Set once {@link #dispose()} has disposed the native loop and before it empties
   * {@link #connections}: a {@link #connect} that adds its connection after that (it
   * raced the dispose, or its source disposed the loop) takes it out again itself.
   */
  private volatile boolean disposed;
  /**
   * What the native loop calls until its last reference goes (update, handlers, key,
   * restart, inspector, executors), each held by its bridge only weakly once the loop is
   * disposed (see {@link Held}); and the same objects held strongly here, so that they go with
   * this object and not before.
   */
  private final List<Held<?>> held;
  private final Object[] callbacks;
  /** Whether the loop has an inspector, which takes the exceptions of its observers and requests. */
  private final boolean inspected;
  /** The numbers of the coalescing keys, if the loop coalesces (read by tests). */
  final Bridges.KeyBridge keys;

  private Loop(long handle, Set<Connection> connections, List<Held<?>> held, boolean inspected,
      Bridges.KeyBridge keys) {
    this.handle = handle;
    this.connections = connections;
    this.held = held;
    this.inspected = inspected;
    this.keys = keys;
    this.callbacks = held.stream().map(Held::get).toArray();
    this.cleanable = LoopNative.track(this, LoopNative.Kind.LOOP, handle);
  }

  /**
   * A builder of a loop in Mobius's form: an update making models and effects.
   *
   * @param model the first model
   * @param update what each event does
   * @param <M> the type of models
   * @param <E> the type of events
   * @param <F> the type of effects
   * @return the builder
   */
  public static <M, E, F> Builder<M, E, F> builder(M model, Update<M, E, F> update) {
    return new Builder<>(model, Objects.requireNonNull(update, "update"));
  }

  /**
   * A builder of a loop in Spin's and RaspSwift's form: a reducer, and feedbacks for
   * the side effects.
   *
   * @param model the first model
   * @param reducer what each event does
   * @param <M> the type of models
   * @param <E> the type of events
   * @return the builder
   */
  public static <M, E> Builder<M, E, Void> reducer(M model, BiFunction<? super M, ? super E, ? extends M> reducer) {
    return new Builder<>(model, Update.reducer(Objects.requireNonNull(reducer, "reducer")));
  }

  /**
   * Queues {@code event}. Without an executor, the event has been handled on return
   * unless another thread is running the loop (that thread handles it); the running
   * thread also handles what other threads queue meanwhile, so while they keep
   * dispatching, its call does not return.
   *
   * @param event the event
   * @return false if the loop is stopped or disposed
   */
  public boolean dispatch(E event) {
    try {
      return LoopNative.dispatch(handle, event) == LoopNative.OK;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Queues {@code event}, or throws if the loop refuses it.
   *
   * @param event the event
   * @throws LoopRefusedException if the loop is stopped or disposed
   */
  public void tryDispatch(E event) {
    int status;
    try {
      status = LoopNative.dispatch(handle, event);
    } finally {
      Reference.reachabilityFence(this);
    }
    if (status != LoopNative.OK) {
      throw new LoopRefusedException(status == LoopNative.DISPOSED);
    }
  }

  /**
   * The model the last step stored.
   *
   * @return the model
   */
  @SuppressWarnings("unchecked")
  public M model() {
    try {
      return (M) LoopNative.model(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Calls {@code observer} with the current model, then with every new model, until
   * the result is disposed. The current model comes on the loop's turn: at once without
   * an executor, if the loop is idle and running; at the next start if it is stopped.
   *
   * @param observer the observer
   * @return what stops it
   */
  public Disposable observe(Effect<? super M> observer) {
    Objects.requireNonNull(observer, "observer");
    try {
      return new NativeDisposable(LoopNative.observe(handle, new Bridges.ObserverBridge(observer, inspected)));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Observes the part of each model that {@code select} computes, skipping a part equal
   * ({@link Objects#equals}) to the previous one: a {@link Diffuser} does the gating.
   *
   * @param select the part of a model
   * @param observer the observer of parts
   * @param <P> the type of the part
   * @return what stops it
   */
  @SuppressWarnings("unchecked")
  public <P> Disposable observe(Function<? super M, ? extends P> select, Effect<? super P> observer) {
    Diffuser<P> into = Diffuser.into((Effect<P>) observer);
    return render(Diffuser.map((Function<M, P>) select, into));
  }

  /**
   * Observes every model for as long as {@code owner} lives (Minimalist's
   * {@code observe(with:)}): the owner is held weakly and handed to the observer; the
   * subscription ends on the first model after the owner is gone, or when disposed.
   *
   * @param owner the owner
   * @param observer the observer
   * @param <O> the type of the owner
   * @return what stops it
   */
  public <O> Disposable observe(O owner, BiConsumer<? super O, ? super M> observer) {
    WeakReference<O> weak = new WeakReference<>(Objects.requireNonNull(owner, "owner"));
    Objects.requireNonNull(observer, "observer");
    AtomicReference<Disposable> self = new AtomicReference<>();
    Disposable made = observe(model -> {
      O alive = weak.get();
      if (alive == null) {
        Disposable subscription = self.get();
        if (subscription != null) {
          subscription.dispose();
        }
        return;
      }
      observer.accept(alive, model);
    });
    self.set(made);
    return made;
  }

  /**
   * Renders the current model, then every new one, through {@code diffuser}.
   *
   * @param diffuser the diffuser
   * @return what stops it
   */
  public Disposable render(Diffuser<M> diffuser) {
    Objects.requireNonNull(diffuser, "diffuser");
    return observe(diffuser::run);
  }

  /**
   * Connects {@code sources} while the loop runs: disconnected on stop, reconnected on
   * start, until the result is disposed. No event of theirs is accepted once that
   * {@code dispose()} has returned. If the loop's turn is still inside their {@code
   * connect} on another thread then, the dispose does not wait for it (a {@code connect}
   * may wait for the disposing thread): they are disconnected once their {@code connect}
   * has returned and the dispose is through, on the thread of whichever ends last
   * (usually that turn's), and what their {@code dispose()} throws then goes where the
   * call under way on that thread sends it (see <b>Errors</b> in the class
   * documentation).
   *
   * <p>Without an executor, a source's emission may run the loop's queued work before it
   * returns, and that work connects and disconnects sources (at a start, a stop, a
   * connect, and where a callback it runs disposes a connection). So a source must not
   * hold a lock of its own while it emits that
   * its {@code connect} or its disposable's {@code dispose} takes, nor one another
   * source of the loop takes there: take the emitters under the lock and emit once it is
   * released.
   *
   * @param sources the sources
   * @return what disconnects them for good
   */
  public Disposable connect(Fuser<E> sources) {
    try {
      long fuser = Handles.fuserHandle(Objects.requireNonNull(sources, "sources"));
      // In the set before the native connection exists: a dispose() on another thread
      // that meets it then finds it there and keeps the fuser on that thread, whose
      // native call may use the sources until it returns (inside a delivery of theirs,
      // they emit until it ends). The keep below is only for this thread's call.
      Connection connection = new Connection(sources, connections);
      connections.add(connection);
      try {
        connection.link = new NativeDisposable(LoopNative.connect(handle, fuser));
      } catch (Throwable t) {
        connections.remove(connection);
        throw t;
      }
      // Read after the add, as dispose() sets it before it empties the set: one of the
      // two takes the connection out, the fuser kept as dispose() keeps those it finds.
      if (disposed) {
        try {
          connection.keepSourcesUntilReturn();
        } finally {
          connections.remove(connection);
        }
      }
      return connection;
    } finally {
      Reference.reachabilityFence(sources);
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Adds {@code feedback} on the loop's turn (at once without an executor, if the loop
   * is idle), after the observers and feedbacks added so far. If the loop runs then, the
   * feedback hears of the current model first; otherwise it hears the first model of the
   * next start. A start made before that turn has handed its start effects to the
   * handlers by then: to hear every first model before the start effects, register the
   * feedback with {@link Builder#feedback}.
   *
   * @param feedback the feedback
   * @return what removes it: it hears of no model once its {@code dispose()} returns
   *     (which waits for a model it is hearing on another thread). Its work in progress
   *     is cancelled, and a feedback {@linkplain Feedback#attached attached} to a gear
   *     lets go of the gear, on the loop's turn (before {@code dispose()} returns without
   *     an executor, if the loop is idle). Until then its jobs may still send (the events
   *     are dropped when they are cancelled), and an attached feedback still calls its
   *     {@code propagate} for each gear event and queues what it makes, which the loop
   *     handles
   */
  public Disposable add(Feedback<M, E> feedback) {
    long description = Objects.requireNonNull(feedback, "feedback").newNative(inspected);
    try {
      return new NativeDisposable(LoopNative.add(handle, description));
    } finally {
      LoopNative.feedbackRelease(description);
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Starts a stopped loop (or one built with {@link Builder#manualStart()}). The start is
   * queued ahead of everything else and, without an executor, run before this returns,
   * as {@link #dispatch} runs events: the calling thread then also handles what other
   * threads queue meanwhile, so while they keep dispatching, this call does not return.
   * {@link #observe}, {@link #render}, {@link #add} and {@link #connect} are queued and
   * run the same way.
   *
   * @return whether it runs afterwards: false once disposed or while being disposed,
   *     and false if a callback of this start (or another thread) stopped or disposed it
   *     again before this returned
   */
  public boolean start() {
    try {
      return LoopNative.start(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Ends the run, keeping the model and the registrations (see the class comment).
   *
   * @throws RuntimeException (or Error) what a connected source's
   *     {@link Disposable#dispose()} threw, once the loop is stopped
   */
  public void stop() {
    try {
      LoopNative.stop(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Ends the loop for good (see the class comment). Idempotent.
   *
   * @throws RuntimeException (or Error) what a connected source's
   *     {@link Disposable#dispose()} threw, once the loop is disposed
   */
  public void dispose() {
    // Taken first: another thread's dispose may clear the set meanwhile (and its pins
    // last only until its own native call returns).
    List<Connection> open = new ArrayList<>(connections);
    try {
      LoopNative.dispose(handle);
    } finally {
      try {
        // And those added meanwhile: a connection being made as the native loop was
        // disposed is in the set by then.
        Set<Connection> kept = new HashSet<>(open);
        kept.addAll(connections);
        for (Connection connection : kept) connection.keepSourcesUntilReturn();
        // Called from a callback, the callbacks may still be called until the thread's
        // outermost native call returns (the trace of the step that disposed).
        Native.keepUntilReturn(handle, callbacks);
        for (Held<?> h : held) h.weaken();
      } finally {
        disposed = true;
        connections.clear();
        Reference.reachabilityFence(this);
      }
    }
  }

  /**
   * A connection of {@link #connect}: it holds the fuser until it is disposed. Not an
   * inner class: the loop's update bridge holds it, and must not hold the loop.
   *
   * <p>Disposed from a callback running inside the delivery of one of its events (the
   * loop's coalescing key, which runs as the event is queued), the native connection
   * disconnects the sources only once that delivery ends, and they may emit until then:
   * the fuser, which holds what they call, is then kept until the thread's outermost
   * native call returns.
   */
  private static final class Connection implements Disposable {
    /** Set by {@link #connect} once the native connection is made, before it returns this. */
    private volatile NativeDisposable link;
    private final Fuser<?> sources;
    private final Set<Connection> connections;

    Connection(Fuser<?> sources, Set<Connection> connections) {
      this.sources = sources;
      this.connections = connections;
    }

    @Override
    public void dispose() {
      try {
        link.dispose();
      } finally {
        try {
          keepSourcesUntilReturn();
        } finally {
          connections.remove(this);
        }
      }
    }

    void keepSourcesUntilReturn() {
      Native.keepUntilReturn(Handles.fuserHandle(sources), sources);
    }
  }

  /**
   * The same as {@link #dispose()}, for try-with-resources.
   *
   * @throws RuntimeException (or Error) as {@link #dispose()}
   */
  @Override
  public void close() {
    dispose();
  }

  /**
   * Records into {@code journal} from the loop's turn on (after what was queued
   * before), in place of the journal recorded into so far; {@code null} stops recording.
   * If the loop is running then, the journal first records the current model as a
   * start, so that its replay begins there; otherwise it records the next start.
   *
   * @param journal the journal, or {@code null}
   */
  public void record(Journal<M, E> journal) {
    try {
      Journal.attach(handle, journal);
    } finally {
      Reference.reachabilityFence(journal);
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether the loop accepts events.
   *
   * @return true if it runs
   */
  public boolean isRunning() {
    try {
      return LoopNative.isRunning(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public String toString() {
    return "Loop[" + Long.toHexString(handle) + "]";
  }

  /**
   * Builds a {@link Loop}.
   *
   * @param <M> the type of models
   * @param <E> the type of events
   * @param <F> the type of effects
   */
  public static final class Builder<M, E, F> {
    private final M model;
    private final Update<M, E, F> update;
    private final List<F> startEffects = new ArrayList<>();
    private final List<EffectHandler<? super F, E>> handlers = new ArrayList<>();
    private final List<Executor> handlerExecutors = new ArrayList<>();
    private final List<Feedback<M, E>> feedbacks = new ArrayList<>();
    private Executor executor;
    private int stepsPerRun = Integer.MAX_VALUE;
    private java.util.function.Function<? super E, ?> coalescing;
    private java.util.function.Function<? super M, Next<M, F>> restart;
    private LoopInspector<M, E, F> inspector;
    private boolean manualStart;
    private Journal<M, E> journal;

    private Builder(M model, Update<M, E, F> update) {
      this.model = model;
      this.update = update;
    }

    /**
     * Effects handed to the handlers once the first model is published: at the loop's
     * first start only; a {@link Loop#start()} after {@link Loop#stop()} goes on from the
     * kept model and hands out none (unless a {@link #restart} gives some).
     *
     * @param effects the effects, in order
     * @return this builder
     */
    @SafeVarargs
    public final Builder<M, E, F> startEffects(F... effects) {
      for (F effect : Objects.requireNonNull(effects, "effects")) {
        startEffects.add(effect);
      }
      return this;
    }

    /**
     * Adds an effect handler that runs inside the loop's step.
     *
     * @param handler the handler
     * @return this builder
     */
    public Builder<M, E, F> handler(EffectHandler<? super F, E> handler) {
      return handler(null, handler);
    }

    /**
     * Adds an effect handler that runs on {@code executor}.
     *
     * @param executor where it runs; {@code null}: inside the loop's step
     * @param handler the handler
     * @return this builder
     */
    public Builder<M, E, F> handler(Executor executor, EffectHandler<? super F, E> handler) {
      handlers.add(Objects.requireNonNull(handler, "handler"));
      handlerExecutors.add(executor);
      return this;
    }

    /**
     * Adds a feedback, registered as the loop is made, after the feedbacks added before
     * and before any observer (the Swift core's {@code Loop(feedbacks:)}). Whatever the
     * executor, and with or without {@link #manualStart()}, every start publishes its
     * first model to it before the start effects go to the handlers, so the events it
     * sends on that model are queued before theirs.
     *
     * @param feedback the feedback
     * @return this builder
     */
    public Builder<M, E, F> feedback(Feedback<M, E> feedback) {
      feedbacks.add(Objects.requireNonNull(feedback, "feedback"));
      return this;
    }

    /**
     * Runs the loop's steps on {@code executor}.
     *
     * @param executor the executor; {@code null}: the dispatching thread
     * @return this builder
     */
    public Builder<M, E, F> executor(Executor executor) {
      return executor(executor, Integer.MAX_VALUE);
    }

    /**
     * Runs the loop's steps on {@code executor}, at most {@code stepsPerRun} queued
     * entries per task, so that a busy loop lets the executor's other work in.
     *
     * @param executor the executor; {@code null}: the dispatching thread
     * @param stepsPerRun the most entries per task (at least 1)
     * @return this builder
     */
    public Builder<M, E, F> executor(Executor executor, int stepsPerRun) {
      if (stepsPerRun < 1) {
        throw new IllegalArgumentException("stepsPerRun must be at least 1");
      }
      this.executor = executor;
      this.stepsPerRun = stepsPerRun;
      return this;
    }

    /**
     * Gives events a coalescing key: a queued event whose key equals a new event's is
     * replaced by it, in its place (the older is dropped). {@code null} keys never
     * coalesce. Called on the dispatching thread for every event sent, before the loop
     * decides to accept it: also for an event that a stopped loop then refuses. A key
     * function that throws gives the event no key; the exception goes to the thread's
     * uncaught exception handler. The core compares keys as numbers, one for each distinct
     * key ({@code equals}, with the {@code hashCode} the key had when its event was sent).
     * The loop keeps a key while an event sent with it is queued or being handled, and
     * forgets it the next time the key function gives a key after that, so keys may come
     * from an unbounded set (an item's id, a query).
     *
     * @param key the key of an event
     * @return this builder
     */
    public Builder<M, E, F> coalescing(java.util.function.Function<? super E, ?> key) {
      this.coalescing = key;
      return this;
    }

    /**
     * Sets the restart (Mobius's {@code Init}): what every run after the loop's first
     * starts from, so that a loop started again (a screen coming back) can reset part of
     * its model or ask for effects again (reload what may have changed meanwhile). The
     * first start (at {@link #build()}, or the first {@link Loop#start()} after
     * {@link #manualStart()}) takes the builder's model and {@link #startEffects}; every
     * {@link Loop#start()} of a stopped loop after it calls {@code restart} with the kept
     * model, and the run starts from what it returns: its model, or the kept one if the
     * {@link Next} has none (the model is published either way), and its effects as the
     * start effects, handed to the handlers after the model is published. The
     * {@link LoopTrace.Kind#STARTED} trace and the {@link Journal} see what it returned.
     *
     * <p>Called on the loop's turn, on the thread that runs its steps (the one calling
     * {@code start()} without an executor), before anything of the start happens. A
     * restart that stops or disposes its loop cancels the start: nothing of it happens (no
     * trace, no model published, no effect handled) and what it returned is dropped; a
     * {@code start()} that ran the start itself (without an executor) then returns false.
     * A restart cannot fail the start: one that throws or returns {@code null} starts the
     * run from the kept model with no effect, and the exception (a
     * {@link NullPointerException} for {@code null}) goes to the thread's uncaught
     * exception handler, not to the inspector.
     *
     * @param restart the first model and start effects of a run, given the kept model;
     *     {@code null}: none (every run after the first starts from the kept model, with
     *     no effect)
     * @return this builder
     */
    public Builder<M, E, F> restart(java.util.function.Function<? super M, Next<M, F>> restart) {
      this.restart = restart;
      return this;
    }

    /**
     * Sets the inspector, which sees every start, event, step and error.
     *
     * @param inspector the inspector
     * @return this builder
     */
    public Builder<M, E, F> inspector(LoopInspector<M, E, F> inspector) {
      this.inspector = inspector;
      return this;
    }

    /**
     * Records the loop's runs into {@code journal}, from its first start (see
     * {@link Journal}).
     *
     * @param journal the journal; {@code null}: none
     * @return this builder
     */
    public Builder<M, E, F> journal(Journal<M, E> journal) {
      this.journal = journal;
      return this;
    }

    /**
     * Builds the loop stopped: {@link Loop#start()} starts it.
     *
     * @return this builder
     */
    public Builder<M, E, F> manualStart() {
      this.manualStart = true;
      return this;
    }

    /** {@code object} held for a bridge, added to {@code held}. */
    private static <T> Held<T> hold(List<Held<?>> held, T object) {
      Held<T> h = new Held<>(object);
      held.add(h);
      return h;
    }

    /**
     * Builds the loop (and starts it, unless {@link #manualStart()}).
     *
     * @return the loop
     */
    public Loop<M, E, F> build() {
      Object[] handlerBridges = new Object[handlers.size()];
      long[] executors = new long[handlers.size()];
      long[] descriptions = new long[feedbacks.size()];
      long loopExecutor = 0;
      List<Held<?>> held = new ArrayList<>();
      try {
        for (int i = 0; i < handlers.size(); i++) {
          handlerBridges[i] = new Bridges.HandlerBridge(hold(held, handlers.get(i)), inspector != null);
          if (handlerExecutors.get(i) != null) {
            executors[i] = Bridges.executorHandle(hold(held, handlerExecutors.get(i)), Integer.MAX_VALUE);
          }
        }
        for (int i = 0; i < descriptions.length; i++) {
          descriptions[i] = feedbacks.get(i).newNative(inspector != null);
        }
        if (executor != null) {
          loopExecutor = Bridges.executorHandle(hold(held, executor), stepsPerRun);
        }
        Set<Connection> connections = ConcurrentHashMap.newKeySet();
        Bridges.KeyBridge keys = coalescing == null ? null : new Bridges.KeyBridge(hold(held, coalescing));
        long made = LoopNative.loopNew(model, startEffects.toArray(),
            new Bridges.UpdateBridge(hold(held, update), connections, inspector != null), handlerBridges, executors, loopExecutor,
            keys, restart == null ? null : new Bridges.RestartBridge(hold(held, restart)),
            inspector == null ? null : new Bridges.InspectorBridge(hold(held, inspector)), Journal.handleOf(journal),
            descriptions, manualStart);
        Reference.reachabilityFence(journal);
        return new Loop<>(made, connections, held, inspector != null, keys);
      } finally {
        for (long handle : executors) {
          if (handle != 0) {
            LoopNative.executorRelease(handle);
          }
        }
        for (long description : descriptions) {
          if (description != 0) {
            LoopNative.feedbackRelease(description);
          }
        }
        if (loopExecutor != 0) {
          LoopNative.executorRelease(loopExecutor);
        }
      }
    }
  }
}
