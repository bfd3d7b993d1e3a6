package io.diffuser.loop;

/** An exception whose message cannot be made: its toString() throws. */
final class Unprintable extends RuntimeException {
  private static final long serialVersionUID = 1L;

  @Override
  public String getMessage() {
    throw new IllegalStateException("no message");
  }
}
