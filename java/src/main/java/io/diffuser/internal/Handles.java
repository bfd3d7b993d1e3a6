package io.diffuser.internal;

import java.util.function.ToLongFunction;

/**
 * The native handles of API objects, for the other API packages of the binding: a
 * {@code Loop} connects a {@code Fuser} by its handle, which {@code Fuser} keeps private.
 *
 * <p>Each API class that others need the handle of registers a reader here when it is
 * initialized. This package is not exported by the module, so the readers are not part
 * of the API.
 */
public final class Handles {
  private static volatile ToLongFunction<Object> fuserReader;

  private Handles() {}

  /**
   * Registers how to read the handle of a {@code Fuser}; called once, by its class.
   *
   * @param reader reads the handle of a {@code Fuser}
   */
  public static void registerFuser(ToLongFunction<Object> reader) {
    if (fuserReader == null) {
      fuserReader = reader;
    }
  }

  /**
   * The native handle of a {@code Fuser}. Its class registered the reader when it was
   * initialized, which it was before {@code fuser} could exist.
   *
   * @param fuser a {@code Fuser}
   * @return its handle
   */
  public static long fuserHandle(Object fuser) {
    return fuserReader.applyAsLong(fuser);
  }
}
