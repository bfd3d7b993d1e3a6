package io.diffuser.loop;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * An executor that runs nothing until told to: a test hands a loop this executor and
 * steps it. A loop on it handles one queued entry per piece of work, so each
 * {@link #runNext()} is one step (the start and registrations count as steps too).
 *
 * <p>Thread-safe: work may be handed from any thread; it runs on the thread that calls
 * {@link #runNext()} or {@link #runAll()}.
 *
 * <p>Work still pending holds native memory until it runs (see {@link Loop}): a test done
 * with a loop disposes it and then calls {@link #runAll()}, which then only frees.
 */
public final class ManualExecutor implements Executor {
  private final ArrayDeque<Runnable> queue = new ArrayDeque<>();

  /** An executor with no work. */
  public ManualExecutor() {}

  @Override
  public synchronized void execute(Runnable work) {
    queue.add(work);
  }

  /**
   * How many pieces of work wait.
   *
   * @return the count
   */
  public synchronized int pending() {
    return queue.size();
  }

  /**
   * Runs the oldest piece of work, if any.
   *
   * @return whether there was one
   */
  public boolean runNext() {
    Runnable work;
    synchronized (this) {
      work = queue.poll();
    }
    if (work == null) {
      return false;
    }
    work.run();
    return true;
  }

  /**
   * Runs work until none is left, including work handed meanwhile.
   *
   * @return how many pieces ran
   */
  public int runAll() {
    int ran = 0;
    while (runNext()) {
      ran++;
    }
    return ran;
  }
}
