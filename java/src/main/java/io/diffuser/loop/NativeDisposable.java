package io.diffuser.loop;

import io.diffuser.fuser.Disposable;
import io.diffuser.internal.Native;
import java.lang.ref.Reference;

/** A {@code dfs_disposable} of a loop: an observer, a feedback, a source connection. */
final class NativeDisposable implements Disposable {
  private final long handle;

  NativeDisposable(long handle) {
    this.handle = handle;
    Native.track(this, Native.Kind.DISPOSABLE, handle);
  }

  @Override
  public void dispose() {
    try {
      Native.disposableDispose(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
