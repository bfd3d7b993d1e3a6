package io.diffuser.loop;

/**
 * A request whose {@code equals} throws {@code failure} when it is compared with a request
 * of id 3, and otherwise compares ids: for the tests of a request feedback whose
 * comparison fails.
 */
final class ThrowingQuery {
  final int id;
  final RuntimeException failure;

  ThrowingQuery(int id, RuntimeException failure) {
    this.id = id;
    this.failure = failure;
  }

  @Override
  public boolean equals(Object other) {
    if (other instanceof ThrowingQuery && ((ThrowingQuery) other).id == 3) {
      throw failure;
    }
    return other instanceof ThrowingQuery && ((ThrowingQuery) other).id == id;
  }

  @Override
  public int hashCode() {
    return id;
  }
}
