/// Stops the program with `message` unless `condition` holds: the check for what the Swift
/// API reports by stopping, where it cannot throw (a combinator nested past the depth
/// bound, a count `ListDiff` cannot take, thread-specific storage the system will not
/// give a loop).
///
/// The message is printed, with the caller's file and line, in every build, since release
/// builds are the ones users ship; `precondition` prints nothing in an optimized build,
/// where the program stops at an illegal instruction.
@inlinable @inline(__always)
func require(
    _ condition: Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if _slowPath(!condition) { stop(message, file: file, line: line) }
}

/// The stop itself, out of line, so that a check inlined into its caller is a compare and
/// a branch.
@usableFromInline @inline(never)
func stop(_ message: () -> String, file: StaticString, line: UInt) -> Never {
    fatalError(message(), file: file, line: line)
}
