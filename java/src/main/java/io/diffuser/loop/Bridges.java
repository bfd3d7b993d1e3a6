// One file although over 400 lines: it is what native code calls in this package, but
// for Journal.collect (the glue resolves each method here once, as Bridges$UpdateBridge
// and so on),
// so that a change of a callback's contract is made in one place, next to the failure
// handling all of them share.
package io.diffuser.loop;

import io.diffuser.Effect;
import io.diffuser.Function;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The objects the native loop calls: each wraps a user callback, turns its exception
 * into a failure the core reports (keeping the exception for the inspector), and its
 * result into what the C ABI expects. The glue calls exactly these methods.
 *
 * <p>Some callbacks cannot fail the loop: a feedback's work or request, a gear's
 * propagate, a coalescing key, a restart, an inspector, an on-cancel action. Their
 * exceptions are handed to the thread's uncaught exception handler ({@link #uncaught}),
 * as any exception nobody can catch is, and the loop goes on as documented for each; a
 * request's go to the loop's inspector instead, if it has one ({@link #report}).
 */
final class Bridges {
  /** The first element of an update's result when the step makes no model. */
  static final Object NO_MODEL = new Object();

  private Bridges() {}

  /**
   * An exception and its text, made once: the trace's {@link LoopTrace#error()} is this
   * text, not the core's copy of it, which is a C string and cannot hold U+0000.
   */
  static final class Failure {
    final Throwable thrown;
    final String text;

    Failure(Throwable thrown, String text) {
      this.thrown = thrown;
      this.text = text;
    }
  }

  /**
   * Gives the core the message of {@code failure}, and keeps it for the inspector if the
   * loop has one ({@code inspected}): the inspector's trace of the failure, on this
   * thread, takes it. Without an inspector nothing would take it, and this thread would
   * keep the exception (and what it reaches) until its outermost native call returns.
   * The glue keeps it, per native thread (not in a {@code ThreadLocal}): on a thread the
   * JVM does not know, the trace's callback runs on another {@code Thread} object than
   * this one.
   */
  static void fail(Throwable failure, boolean inspected) {
    String text = text(failure);
    if (inspected) {
      LoopNative.keepFailure(new Failure(failure, text));
    }
    LoopNative.setError(text);
  }

  /**
   * The text of {@code failure}: its {@code toString()}, or, if that throws too (a
   * {@code getMessage()} that fails), its class name and what its {@code toString()}
   * threw. Never throws: the exception a callback threw must reach the inspector as it
   * is, and not be replaced by what describing it threw.
   */
  static String text(Throwable failure) {
    try {
      return String.valueOf(failure);
    } catch (Throwable broken) {
      return failure.getClass().getName() + " (its toString() threw " + broken.getClass().getName() + ")";
    }
  }

  /**
   * Hands {@code failure}, thrown by a callback that cannot fail the loop, to the current
   * thread's uncaught exception handler (which prints it, by default), so that it is not
   * lost. The thread goes on.
   */
  static void uncaught(Throwable failure) {
    Thread thread = Thread.currentThread();
    try {
      thread.getUncaughtExceptionHandler().uncaughtException(thread, failure);
    } catch (Throwable ignored) {
      // A handler that throws has nowhere to report to either.
    }
  }

  /**
   * Reports {@code failure}, which a feedback's request function or a request's {@code
   * equals} threw: to the loop's inspector if it has one ({@code inspected}), kept for its
   * trace of the failure (FEEDBACK_FAILED), which the core reports on this thread right
   * after; otherwise to the thread's {@linkplain #uncaught uncaught exception handler}.
   *
   * @return what the caller throws, which fails the core's call and reaches no Java caller
   */
  static RuntimeException report(Throwable failure, boolean inspected) {
    if (inspected) {
      LoopNative.keepFailure(new Failure(failure, text(failure)));
    } else {
      uncaught(failure);
    }
    return new io.diffuser.internal.ReportedFailure(failure);
  }

  /** {@code dfs_update_fn}: {model or NO_MODEL, effects...}, or null if it failed. */
  static final class UpdateBridge {
    private final Held<Update<Object, Object, Object>> update;
    private final boolean inspected;
    /**
     * What the native loop must keep reachable for as long as it holds this bridge (the
     * fusers of its connections); never read.
     */
    @SuppressWarnings("unused")
    private final Object held;

    /** An update with no inspector (a journal's replay). */
    UpdateBridge(Update<?, ?, ?> update) {
      this(new Held<>(update), null, false);
    }

    /** {@code inspected}: whether the loop has an inspector (see {@link Bridges#fail}). */
    @SuppressWarnings("unchecked")
    UpdateBridge(Held<? extends Update<?, ?, ?>> update, Object held, boolean inspected) {
      this.update = (Held<Update<Object, Object, Object>>) update;
      this.held = held;
      this.inspected = inspected;
    }

    Object[] next(Object model, Object event) {
      try {
        Next<Object, Object> next = present(update).next(model, event);
        if (next == null) {
          throw new NullPointerException("the update returned null");
        }
        return unpack(next);
      } catch (Throwable failure) {
        fail(failure, inspected);
        return null;
      }
    }
  }

  /**
   * {@code next} as the glue fills a {@code dfs_next} from it: {model or NO_MODEL,
   * effects...}. The update's and the restart's.
   */
  private static Object[] unpack(Next<?, ?> next) {
    List<?> effects = next.effects();
    Object[] result = new Object[1 + effects.size()];
    result[0] = next.hasModel() ? next.model() : NO_MODEL;
    for (int i = 0; i < effects.size(); i++) {
      result[i + 1] = effects.get(i);
    }
    return result;
  }

  /**
   * {@code dfs_restart_fn}: {model or NO_MODEL, effects...}, or null for nothing (the kept
   * model, no effect). A restart cannot fail, as the core's cannot: one that throws or
   * returns null gives nothing, and its exception (a NullPointerException for null) is
   * {@linkplain #uncaught reported}.
   */
  static final class RestartBridge {
    private final Held<java.util.function.Function<Object, Next<Object, Object>>> restart;

    @SuppressWarnings("unchecked")
    RestartBridge(Held<? extends java.util.function.Function<?, ?>> restart) {
      this.restart = (Held<java.util.function.Function<Object, Next<Object, Object>>>) restart;
    }

    Object[] restart(Object model) {
      try {
        java.util.function.Function<Object, Next<Object, Object>> function = restart.get();
        if (function == null) {
          return null; // the loop was disposed and collected: it does not start anyway
        }
        Next<Object, Object> next = function.apply(model);
        if (next == null) {
          throw new NullPointerException("the restart returned null");
        }
        return unpack(next);
      } catch (Throwable failure) {
        uncaught(failure);
        return null;
      }
    }
  }

  /** {@code dfs_handler_fn}. */
  static final class HandlerBridge {
    private final Held<EffectHandler<Object, Object>> handler;
    private final boolean inspected;

    /** {@code inspected}: whether the loop has an inspector (see {@link Bridges#fail}). */
    @SuppressWarnings("unchecked")
    HandlerBridge(Held<? extends EffectHandler<?, ?>> handler, boolean inspected) {
      this.handler = (Held<EffectHandler<Object, Object>>) handler;
      this.inspected = inspected;
    }

    boolean handle(Object effect, long job) {
      try {
        present(handler).handle(effect, new Job<>(job));
        return true;
      } catch (Throwable failure) {
        fail(failure, inspected);
        return false;
      }
    }
  }

  /**
   * {@code dfs_feedback_fn}. Feedbacks cannot fail: work that throws is finished, as if
   * it had called {@link Job#finish()} (the events it sent stay queued, and an overlap
   * strategy that waits for it goes on), and the exception is {@linkplain #uncaught
   * reported}.
   */
  static final class FeedbackBridge {
    private final FeedbackWork<Object, Object> work;

    @SuppressWarnings("unchecked")
    FeedbackBridge(FeedbackWork<?, ?> work) {
      this.work = (FeedbackWork<Object, Object>) work;
    }

    void start(Object value, long job) {
      try {
        work.start(value, new Job<>(job));
      } catch (Throwable failure) {
        try {
          LoopNative.jobFinish(job);
        } catch (Throwable alsoFailed) {
          failure.addSuppressed(alsoFailed);
        }
        uncaught(failure);
      }
    }
  }

  /** {@code dfs_propagate_fn} of a gear feedback: null for nothing. */
  static final class PropagateBridge {
    private final Function<Object, Object> propagate;

    @SuppressWarnings("unchecked")
    PropagateBridge(Function<?, ?> propagate) {
      this.propagate = (Function<Object, Object>) propagate;
    }

    Object propagate(Object value) {
      try {
        return propagate.apply(value);
      } catch (Throwable failure) {
        uncaught(failure);
        return null;
      }
    }
  }

  /** {@code dfs_effect_fn} of an observer. */
  static final class ObserverBridge {
    private final Effect<Object> observer;
    private final boolean inspected;

    /** {@code inspected}: whether the loop has an inspector (see {@link Bridges#fail}). */
    @SuppressWarnings("unchecked")
    ObserverBridge(Effect<?> observer, boolean inspected) {
      this.observer = (Effect<Object>) observer;
      this.inspected = inspected;
    }

    boolean accept(Object model) {
      try {
        observer.run(model);
        return true;
      } catch (Throwable failure) {
        fail(failure, inspected);
        return false;
      }
    }
  }

  /**
   * {@code dfs_key_fn} and {@code dfs_key_done_fn}: the same number for equal keys, or
   * Long.MIN_VALUE for none. The core compares numbers; a key object keeps its number while
   * the core holds a key given with it (it hands each back through {@link #done}), and is
   * forgotten at the next {@link #key} once every one came back, so that a loop coalescing
   * by ever new keys keeps none for events long gone.
   *
   * <p>A key object is hashed once, as its event is sent, and compared only while an event
   * is sent, never as it is forgotten: it keeps the hash it had then. The core may hand a
   * key back on any thread, even while it holds the loop's lock, so {@link #done} only
   * queues the number, and {@link #key} settles what came back under this bridge's lock.
   */
  static final class KeyBridge {
    /** A key object with the number it was given, and how many of its keys the core holds. */
    private static final class Numbered {
      final Object key;
      final int hash;
      long value;
      int held;
      /** Set as it is forgotten: it then equals only itself, so no key's equals runs. */
      boolean leaving;

      Numbered(Object key) {
        this.key = key;
        this.hash = key.hashCode();
      }

      @Override
      public int hashCode() {
        return hash;
      }

      @Override
      public boolean equals(Object other) {
        return other == this
            || !leaving && other instanceof Numbered && key.equals(((Numbered) other).key);
      }
    }

    private final Held<java.util.function.Function<Object, ?>> key;
    /** Guarded by this: the key objects whose keys the core holds, by key and by number. */
    private final HashMap<Numbered, Numbered> byKey = new HashMap<>();
    private final HashMap<Long, Numbered> byValue = new HashMap<>();
    /** Guarded by this: the next number. */
    private long next;
    /** Numbers handed back and not yet settled. */
    private final ConcurrentLinkedQueue<Long> back = new ConcurrentLinkedQueue<>();

    @SuppressWarnings("unchecked")
    KeyBridge(Held<? extends java.util.function.Function<?, ?>> key) {
      this.key = (Held<java.util.function.Function<Object, ?>>) key;
    }

    long key(Object event) {
      try {
        java.util.function.Function<Object, ?> function = key.get();
        if (function == null) {
          return Long.MIN_VALUE; // the loop is gone: it refuses the event anyway
        }
        Object k = function.apply(event);
        if (k == null) {
          return Long.MIN_VALUE;
        }
        Numbered probe = new Numbered(k);
        synchronized (this) {
          settle();
          Numbered numbered = byKey.get(probe);
          if (numbered == null) {
            numbered = probe;
            numbered.value = next++;
            byKey.put(numbered, numbered);
            byValue.put(numbered.value, numbered);
          }
          numbered.held++;
          return numbered.value;
        }
      } catch (Throwable failure) {
        uncaught(failure);
        return Long.MIN_VALUE;
      }
    }

    /** The core let go of a key {@link #key} gave. */
    void done(long value) {
      back.add(value);
    }

    /**
     * Counts the keys that came back; forgets the key objects whose keys all did, by the
     * hash they had when sent. Holding this.
     */
    private void settle() {
      for (Long value; (value = back.poll()) != null; ) {
        Numbered numbered = byValue.get(value);
        if (numbered != null && --numbered.held == 0) {
          byValue.remove(value);
          numbered.leaving = true; // HashMap.remove compares with the argument's equals
          byKey.remove(numbered);
        }
      }
    }

    /** How many key objects have a number once what came back is settled (for tests). */
    synchronized int size() {
      settle();
      return byKey.size();
    }
  }

  /** {@code dfs_inspect_fn}. */
  static final class InspectorBridge {
    private static final LoopTrace.Kind[] KINDS = LoopTrace.Kind.values();
    private static final LoopTrace.DropReason[] REASONS = LoopTrace.DropReason.values();
    private final Held<LoopInspector<Object, Object, Object>> inspector;

    @SuppressWarnings("unchecked")
    InspectorBridge(Held<? extends LoopInspector<?, ?, ?>> inspector) {
      this.inspector = (Held<LoopInspector<Object, Object, Object>>) inspector;
    }

    /**
     * {@code refusal}: for SOURCE_FAILED, the exception the source's {@code connect}
     * threw, if the glue kept it; {@code failed}: for FAILED, EFFECT_FAILED and
     * OBSERVER_FAILED, the {@link Failure} that {@link #fail} kept, and for
     * FEEDBACK_FAILED the one {@link #report} kept, if any.
     */
    void inspect(int kind, Object event, Object model, boolean hasNextModel, Object nextModel, Object[] effects,
                 Object effect, int reason, String error, Throwable refusal, Object failed) {
      LoopTrace.Kind k = KINDS[kind - 1];
      Failure kept = (Failure) failed;
      Throwable failure = k == LoopTrace.Kind.SOURCE_FAILED ? refusal : kept == null ? null : kept.thrown;
      LoopInspector<Object, Object, Object> target = inspector.get();
      if (target == null) {
        return; // the loop was disposed and collected, with its inspector
      }
      try {
        if (refusal != null) {
          error = text(refusal); // as fail() makes the message of the others
        } else if (kept != null) {
          error = kept.text;
        }
        target.inspect(new LoopTrace<>(k, event, model, hasNextModel, nextModel,
            effects == null ? List.of() : java.util.Collections.unmodifiableList(java.util.Arrays.asList(effects)),
            effect, reason == 0 ? null : REASONS[reason - 1], error, failure));
      } catch (Throwable thrown) {
        uncaught(thrown);
      }
    }
  }

  /** {@code dfs_execute_fn} over a Java executor. */
  static final class ExecutorBridge {
    private final Held<Executor> executor;

    ExecutorBridge(Held<Executor> executor) {
      this.executor = executor;
    }

    /**
     * Hands {@code work} to the executor. The core needs it run exactly once: work the
     * executor refuses, or whose {@code execute} throws (reported as uncaught), runs
     * here, and whichever of the two comes first runs it (an executor may throw after it
     * took the work).
     */
    void execute(long work) {
      WorkOnce once = new WorkOnce(work);
      Executor target = executor.get();
      if (target == null) {
        once.run(); // the loop was disposed and collected: its work has nothing to do
        return;
      }
      try {
        target.execute(once);
      } catch (RejectedExecutionException refused) {
        once.run();
      } catch (Throwable failure) {
        uncaught(failure);
        once.run();
      }
    }
  }

  /** A piece of the core's work, run at most once whoever calls it. */
  static final class WorkOnce implements Runnable {
    private static final AtomicIntegerFieldUpdater<WorkOnce> CLAIMED =
        AtomicIntegerFieldUpdater.newUpdater(WorkOnce.class, "claimed");
    private final long work;
    private volatile int claimed;

    WorkOnce(long work) {
      this.work = work;
    }

    @Override
    public void run() {
      if (CLAIMED.compareAndSet(this, 0, 1)) {
        LoopNative.workRun(work);
      }
    }
  }

  /** An on-cancel action that cannot throw into the core. */
  static Runnable action(Runnable action) {
    java.util.Objects.requireNonNull(action, "action");
    return () -> {
      try {
        action.run();
      } catch (Throwable failure) {
        uncaught(failure); // Cancellation goes on.
      }
    };
  }

  /** The native executor of {@code executor} (the caller releases it), or 0 for null. */
  static long executorHandle(Executor executor, int stepsPerRun) {
    return executor == null ? 0 : executorHandle(new Held<>(executor), stepsPerRun);
  }

  /** The native executor of the executor {@code executor} holds (the caller releases it). */
  static long executorHandle(Held<Executor> executor, int stepsPerRun) {
    int steps = executor.get() instanceof ManualExecutor ? 1 : stepsPerRun;
    return LoopNative.executorNew(new ExecutorBridge(executor), steps);
  }

  /**
   * The object {@code held} holds, for a callback that must run: a loop calls its
   * update or handlers only while it runs, and it runs only while reachable.
   */
  private static <T> T present(Held<T> held) {
    T object = held.get();
    if (object == null) {
      throw new IllegalStateException("the loop was disposed and collected");
    }
    return object;
  }
}
