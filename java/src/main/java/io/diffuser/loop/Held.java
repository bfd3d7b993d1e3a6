package io.diffuser.loop;

import java.lang.ref.WeakReference;

/**
 * A user object the native loop calls through a bridge (an update, a handler, an
 * inspector, a coalescing key, a restart, an executor): held strongly until the loop is
 * disposed, then only weakly.
 *
 * <p>The native loop holds its bridges by JNI global references until its last native
 * reference goes, which for a Java loop is when the {@link Loop} is collected. A global
 * reference is a root for the collector: an update or handler that reaches its loop (a
 * screen's lambda, the screen holding the loop) would keep a disposed loop, and all it
 * reaches, for ever. So {@link Loop#dispose()} weakens what its bridges hold, and the
 * {@link Loop} holds the same objects strongly: they stay for as long as the loop can be
 * used, and go with it. A running loop keeps them strongly, as documented: like a
 * running thread, it is not collected while its callbacks reach it.
 *
 * @param <T> the type of the object
 */
final class Held<T> {
  private volatile T strong;
  private final WeakReference<T> weak;

  Held(T object) {
    this.strong = object;
    this.weak = new WeakReference<>(object);
  }

  /** The object; null only once its loop was disposed and collected. */
  T get() {
    T object = strong;
    return object != null ? object : weak.get();
  }

  /** From now on, holds the object only weakly. */
  void weaken() {
    strong = null;
  }
}
