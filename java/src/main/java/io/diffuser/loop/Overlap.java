package io.diffuser.loop;

/**
 * What a feedback does with its work in progress when a new model (or a new request)
 * comes: Spin's execution strategies, and one more.
 */
public enum Overlap {
  /**
   * Cancel the work in progress and start anew (Spin's default). Events the cancelled
   * work sent that are still queued are dropped.
   */
  CANCEL_PREVIOUS,
  /**
   * Keep the work in progress and ignore the new model while it runs; the work must
   * {@link Job#finish()} for the next one to start.
   */
  KEEP_PREVIOUS,
  /**
   * Start anew and let the work in progress run to its end. Every job must end
   * ({@link Job#finish()}): the open ones are kept until the loop stops.
   */
  CONCURRENT
}
