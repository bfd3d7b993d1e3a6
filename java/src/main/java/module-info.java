/**
 * Diffuser for Java: {@link io.diffuser.diffuser.Diffuser} spreads an immutable model into
 * side effects, running each effect only when its part of the model changed;
 * {@link io.diffuser.fuser.Fuser} gathers events from many sources into one stream.
 *
 * <p>The module exports the API packages only: {@code io.diffuser} (the callback
 * interfaces), {@code io.diffuser.diffuser}, {@code io.diffuser.fuser} and
 * {@code io.diffuser.list} (the keyed list diff) and {@code io.diffuser.loop} (loops:
 * state, events, effects and feedbacks). The binding's
 * internals (its native methods and the loader of the native libraries, which ship
 * inside the jar) are not exported. The jar works on the class path as well.
 */
module io.diffuser {
  exports io.diffuser;
  exports io.diffuser.diffuser;
  exports io.diffuser.fuser;
  exports io.diffuser.list;
  exports io.diffuser.loop;
}
