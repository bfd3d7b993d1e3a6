package io.diffuser.loop;

import java.lang.ref.Reference;

/**
 * A bus of gear events between loops (Spin's {@code Gear}): a feedback of one loop pushes
 * gear events made from its models, a feedback of another loop turns them into its own
 * events.
 *
 * <pre>{@code
 * Gear<AuthEvent> gear = new Gear<>();
 * feature.add(Feedback.pushing(gear, m -> m.unauthorized ? AuthEvent.ISSUE : null));
 * routing.add(Feedback.attached(gear, g -> g == AuthEvent.ISSUE ? Routing.CHECK_AUTH : null));
 * }</pre>
 *
 * <p>A gear event reaches the attached loops as a dispatched event does: queued there,
 * handled on their turn. A loop hears a gear only while it runs. The gear is the native
 * core's; its handle is released once this object is unreachable (the feedbacks attached
 * to it keep what they need).
 *
 * @param <G> the type of gear events
 */
public final class Gear<G> {
  final long handle;

  /** A gear nobody is attached to yet. */
  public Gear() {
    handle = LoopNative.gearNew();
    LoopNative.track(this, LoopNative.Kind.GEAR, handle);
  }

  /**
   * Pushes {@code event} to every loop attached to the gear. Events sent from several
   * threads reach the loops one at a time, in the order sent, each delivered by the thread
   * delivering when it was sent, whose call therefore does not return while other threads
   * keep sending.
   *
   * @param event the gear event
   */
  public void send(G event) {
    try {
      LoopNative.gearSend(handle, event);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public String toString() {
    return "Gear[" + Long.toHexString(handle) + "]";
  }
}
