/**
 * Diffuser for Java: {@link io.diffuser.diffuser.Diffuser} spreads an immutable model into
 * side effects, running each effect only when its part of the model changed;
 * {@link io.diffuser.fuser.Fuser} gathers events from many sources into one stream.
 *
 * <p>Both are thin handles to nodes of the native Diffuser core (libdiffuser.so, reached
 * through JNI): caching, gating, ordering, locking and dispatch happen there, exactly as
 * for the Swift and C APIs. The native libraries ship inside the jar and are loaded on
 * first use.
 */
package io.diffuser;
