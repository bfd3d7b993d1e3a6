package io.diffuser.fuser;

import io.diffuser.Effect;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** A hand-driven source: emit() sends to every connected effect. */
final class TestSource<A> implements Source<A> {
  final List<Effect<A>> effects = new CopyOnWriteArrayList<>();
  final List<Effect<A>> everConnected = new CopyOnWriteArrayList<>();
  final AtomicInteger connects = new AtomicInteger();
  final AtomicInteger disposes = new AtomicInteger();
  volatile RuntimeException connectFailure;
  volatile RuntimeException disposeFailure;
  volatile boolean returnNull;

  @Override
  public Disposable connect(Effect<A> effect) {
    connects.incrementAndGet();
    if (connectFailure != null) {
      throw connectFailure;
    }
    if (returnNull) {
      return null;
    }
    effects.add(effect);
    everConnected.add(effect);
    AtomicBoolean done = new AtomicBoolean();
    return () -> {
      if (!done.compareAndSet(false, true)) {
        throw new AssertionError("a source disposable was disposed twice");
      }
      disposes.incrementAndGet();
      effects.remove(effect);
      if (disposeFailure != null) {
        throw disposeFailure;
      }
    };
  }

  void emit(A event) {
    for (Effect<A> effect : effects) {
      effect.run(event);
    }
  }
}
