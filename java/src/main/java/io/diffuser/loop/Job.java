package io.diffuser.loop;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;

/**
 * A piece of work a loop started (an effect being handled, a feedback reacting to a
 * model) and its way back into the loop.
 *
 * <p>The work sends events with {@link #send}, at once or later, from any thread; each
 * is queued like a dispatched event. A job ends when it {@link #finish()}es (later sends
 * are refused; events it sent stay queued) or is cancelled: a newer model replaced the
 * work (see {@link Overlap}), its request went away, or the loop stopped or was
 * disposed. Then later sends are refused, events it sent that are still queued are
 * dropped, and the actions given to {@link #onCancel} run.
 *
 * @param <E> the type of events
 */
public final class Job<E> {
  private final long handle;
  private final Cleaner.Cleanable cleanable;

  /** Takes a reference to a job handle lent to a callback. */
  Job(long handle) {
    LoopNative.jobRetain(handle);
    this.handle = handle;
    this.cleanable = LoopNative.track(this, LoopNative.Kind.JOB, handle);
  }

  /**
   * Queues {@code event} in the loop.
   *
   * @param event the event
   * @return false if the job ended or the loop refuses events
   */
  public boolean send(E event) {
    try {
      return LoopNative.jobSend(handle, event) == 0;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Marks the work done: later sends are refused, and the cancel actions dropped. Does
   * nothing once the job was cancelled or its loop stopped or was disposed.
   */
  public void finish() {
    try {
      LoopNative.jobFinish(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Cancels the work: later sends are refused, its queued events are dropped, and the
   * cancel actions run on the calling thread.
   */
  public void cancel() {
    try {
      LoopNative.jobCancel(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether the job was cancelled, or its loop stopped or was disposed before it finished
   * (a job that finished first stays finished).
   *
   * @return true if it was
   */
  public boolean isCancelled() {
    try {
      return LoopNative.jobIsCancelled(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Runs {@code action} once when the job is cancelled (at once if it was already),
   * never if it finishes first: to stop the work (cancel a request, a timer). What
   * {@code action} throws goes to the thread's uncaught exception handler, and the other
   * actions run all the same.
   *
   * @param action the action
   */
  public void onCancel(Runnable action) {
    try {
      LoopNative.jobOnCancel(handle, Bridges.action(action));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Drops the native reference now instead of when this object becomes unreachable. */
  void release() {
    cleanable.clean();
  }

  @Override
  public String toString() {
    return "Job[" + Long.toHexString(handle) + "]";
  }
}
