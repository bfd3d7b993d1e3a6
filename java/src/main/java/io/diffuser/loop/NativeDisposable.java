package io.diffuser.loop;

import io.diffuser.fuser.Disposable;
import io.diffuser.internal.Native;

/** A {@code dfs_disposable} of a loop: an observer, a feedback, a source connection. */
final class NativeDisposable implements Disposable {
  private final long handle;

  NativeDisposable(long handle) {
    this.handle = handle;
    Native.track(this, Native.Kind.DISPOSABLE, handle);
  }

  @Override
  public void dispose() {
    Native.disposableDispose(handle);
  }
}
