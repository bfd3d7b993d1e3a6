package io.diffuser.loop;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A record of a loop's runs: the model each run started from and every event that
 * reached the update (also those whose update threw), in order.
 *
 * <p>Give one to a loop ({@link Loop.Builder#journal}, or {@link Loop#record} on a loop
 * that runs) and {@link #replay} it later through the update to re-derive every model
 * the loop published, without handling a single effect: to reproduce a bug report, or
 * to check that a changed update keeps old sessions' models. Replay means something
 * because an update has no side effects.
 *
 * <pre>{@code
 * Journal<Model, Event> journal = new Journal<>();
 * Loop<Model, Event, Effect> loop = Loop.builder(Model.INITIAL, Model::update).journal(journal).build();
 * // ... the app runs ...
 * List<Model> models = journal.replay(Model::update);   // every model, in the order published
 * }</pre>
 *
 * <p>A {@code Journal} is a handle to the native core's journal (the C API's
 * {@code dfs_journal}); recording is the core loop's, and {@link #replay} is the core's
 * replay. Thread-safe.
 *
 * @param <M> the type of models
 * @param <E> the type of events
 */
public final class Journal<M, E> {
  static {
    // LoopNative loads the libraries and resolves the update bridge a replay calls.
    LoopNative.ensureLoaded();
    load();
  }

  private static final Cleaner CLEANER = Cleaner.create();

  private final long handle;

  /** An empty journal. */
  public Journal() {
    long made = create();
    this.handle = made;
    CLEANER.register(this, () -> release(made));
  }

  /**
   * Every record, in order: a copy, taken now.
   *
   * @return the entries
   */
  public List<Entry<M, E>> entries() {
    List<Entry<M, E>> out = new ArrayList<>();
    try {
      entries(handle, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return Collections.unmodifiableList(out);
  }

  /** Forgets every record. */
  public void clear() {
    try {
      clear(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Every model the recorded runs published, re-derived through {@code update}: each
   * start model, then the model of each step that made one. Effects are computed and
   * dropped, never handled. An event whose update throws leaves the model as it was, as
   * it did in the loop. The update is called on this thread, during this call.
   *
   * @param update the update to replay the events through
   * @param <F> the type of effects
   * @return the models, in order
   */
  public <F> List<M> replay(Update<M, E, F> update) {
    Objects.requireNonNull(update, "update");
    List<M> models = new ArrayList<>();
    try {
      replay(handle, new Bridges.UpdateBridge(update), models);
    } finally {
      Reference.reachabilityFence(this);
    }
    return Collections.unmodifiableList(models);
  }

  /** The handle of {@code journal}, or 0 for none, for a new loop's config. */
  static long handleOf(Journal<?, ?> journal) {
    return journal == null ? 0 : journal.handle;
  }

  /** Makes {@code loop} (a loop handle) record into {@code journal} (null: stop). */
  static void attach(long loop, Journal<?, ?> journal) {
    record(loop, journal == null ? 0 : journal.handle);
  }

  /** Called by the native {@link #entries(long, List)}: one entry. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void collect(List list, boolean start, Object value) {
    list.add(new Entry<>(start, value));
  }

  @Override
  public String toString() {
    return "Journal[" + Long.toHexString(handle) + "]";
  }

  /**
   * One record: a run started from a model, or an event reached the update.
   *
   * @param <M> the type of models
   * @param <E> the type of events
   */
  public static final class Entry<M, E> {
    private final boolean start;
    private final Object value;

    Entry(boolean start, Object value) {
      this.start = start;
      this.value = value;
    }

    /**
     * Whether a run started here.
     *
     * @return true for a start, false for an event
     */
    public boolean isStart() {
      return start;
    }

    /**
     * The model the run started from.
     *
     * @return the model
     * @throws IllegalStateException if this is an event
     */
    @SuppressWarnings("unchecked")
    public M model() {
      if (!start) {
        throw new IllegalStateException("an event entry has no model");
      }
      return (M) value;
    }

    /**
     * The event that reached the update.
     *
     * @return the event
     * @throws IllegalStateException if this is a start
     */
    @SuppressWarnings("unchecked")
    public E event() {
      if (start) {
        throw new IllegalStateException("a start entry has no event");
      }
      return (E) value;
    }

    @Override
    public boolean equals(Object other) {
      if (!(other instanceof Entry)) {
        return false;
      }
      Entry<?, ?> that = (Entry<?, ?>) other;
      return start == that.start && Objects.equals(value, that.value);
    }

    @Override
    public int hashCode() {
      return Objects.hash(start, value);
    }

    @Override
    public String toString() {
      return (start ? "start " : "event ") + value;
    }
  }

  // The natives, in journal_jni.c over the Journals section of diffuser.h.

  private static native void load();

  private static native long create();

  private static native void record(long loop, long journal);

  private static native void entries(long journal, List<?> out);

  private static native void clear(long journal);

  private static native void replay(long journal, Object update, List<?> models);

  private static native void release(long journal);
}
