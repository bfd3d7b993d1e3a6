package io.diffuser.loop;

/**
 * The work a {@link Feedback} starts on a value: a model, or a request.
 *
 * @param <V> the type of the value
 * @param <E> the type of events
 */
@FunctionalInterface
public interface FeedbackWork<V, E> {
  /**
   * Starts the work. Send events with {@link Job#send}; call {@link Job#finish()} when
   * done.
   *
   * @param value the model or the request
   * @param job the way back into the loop
   */
  void start(V value, Job<E> job);
}
