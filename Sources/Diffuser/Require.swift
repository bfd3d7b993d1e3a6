/// Stops the program with `message` unless `condition` holds: the check for a misuse that
/// the Swift API reports by stopping (a combinator nested past the depth bound, a negative
/// count), where it cannot throw.
///
/// `precondition` would drop its message from an optimized build, where the program
/// stops at an illegal instruction and says nothing; this prints the message, with the
/// caller's file and line, in every build, since release builds are the ones users ship.
@inlinable @inline(__always)
func require(
    _ condition: Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition { fatalError(message(), file: file, line: line) }
}
