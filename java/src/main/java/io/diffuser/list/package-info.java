/**
 * The keyed list diff: {@link io.diffuser.list.ListDiff} tells what changed from one
 * list to the next, with items identified by a key and their content compared
 * separately, and gives it in the two forms list views want: one batch in UIKit's
 * coordinates ({@link io.diffuser.list.ListBatch}) and a step-by-step script for
 * RecyclerView's {@code notifyItem*} calls or for patching a list
 * ({@link io.diffuser.list.ListScript}).
 *
 * <p>{@link io.diffuser.list.ListSectionsDiff} does the same for a list of sections, each
 * with its own items, in one call, with its batch in UIKit's coordinates
 * ({@link io.diffuser.list.ListSectionsBatch}).
 *
 * <p>{@code Diffuser.intoList} ({@link io.diffuser.diffuser.Diffuser}) keeps a list view
 * in step with a list: it diffs each new list against the last one it applied and hands a
 * {@link io.diffuser.list.ListSink} the changes and the new list.
 *
 * <p>Every result is computed by the native Diffuser core in one call, the same code the
 * Swift and C APIs use; the classes of this package only carry its arrays.
 *
 * <p>Memory: once it knows the lists' sizes and before it reads an item, the core asks
 * for what any diff of such lists holds at once (12 bytes an item of both lists, more for
 * sections) and throws {@link java.lang.OutOfMemoryError} if the native heap cannot give
 * it. That is a lower bound: a diff that passes it and then runs out of native memory
 * stops the process, as it does in C ({@code include/diffuser.h}, "Lists"). The Java
 * side holds the key objects of both lists during a diff.
 */
package io.diffuser.list;
