/**
 * Internals of the Java binding: the native methods, the loader of the native libraries
 * and the handle bookkeeping. Not API: it may change in any release, and module
 * {@code io.diffuser} does not export it.
 */
package io.diffuser.internal;
