/// Calls `body` with the value at `pointer` as its (borrowed) argument, without copying
/// the value: no reference inside it is retained or released.
///
/// Why: nodes hand values down the tree by address (see `Node`), and passing
/// `pointer.pointee` to code the optimizer cannot see into (a user's closure) makes it
/// copy the value first, retaining every reference inside it, because it cannot prove
/// that the closure leaves the memory alone. Here the value's bits are copied to a
/// temporary instead, the temporary is lent to `body` and its bits are then forgotten:
/// the same thing a caller does when it passes a value it owns as a borrowed argument.
///
/// Sound because the value at `pointer` outlives the call and nothing writes it during
/// the call: the pointers nodes pass point into a run's copy of its input (lent for the
/// whole run, `withPrivateCopy`), into a gate's cache (written only after its comparison
/// returned) or at a map's part (exchanged by its gate only after everything below the
/// gate returned), and the one a loop's step passes at the loop's model
/// (`LoopCore.modelCell`: stored only by the drainer, never during the update or the
/// observers' calls, and freed with the loop, which a drain holds). A type whose values
/// may not move in memory (not bitwise takable, e.g. one holding a weak reference, also
/// on Linux) is copied the ordinary way.
@inlinable @inline(__always)
func withBorrowed<A, R>(_ pointer: UnsafePointer<A>, _ body: (A) throws -> R) rethrows -> R {
    guard _isBitwiseTakable(A.self) else { return try body(pointer.pointee) }
    return try withUnsafeTemporaryAllocation(of: A.self, capacity: 1) { buffer in
        let temporary = buffer.baseAddress.unsafelyUnwrapped
        UnsafeMutableRawPointer(temporary).copyMemory(from: pointer, byteCount: MemoryLayout<A>.size)
        // The temporary's bits move into `value` and back, so neither is ever destroyed.
        let value = temporary.move()
        do {
            let result = try body(value)
            temporary.initialize(to: value)
            return result
        } catch {
            temporary.initialize(to: value)
            throw error
        }
    }
}

/// Calls `body` with the address of a copy of the value at `pointer` that only `body`
/// reaches: a copy of the value's bits, lent like `withBorrowed`'s (nothing is retained or
/// released), or, for a type whose values may not move in memory, a copy of the value.
///
/// Why: a run lends its maps' closures their input through an exclusive access
/// (`callInPlace`), which must not overlap any other access to the same memory. The
/// caller's value may be read meanwhile: by another thread's run of another graph over
/// the same constant, or by a closure reading it by name. The run's copy is read by
/// nothing but the run.
@inlinable @inline(__always)
func withPrivateCopy<A, R>(of pointer: UnsafePointer<A>, _ body: (UnsafePointer<A>) throws -> R) rethrows -> R {
    guard _isBitwiseTakable(A.self) else {
        var copy = pointer.pointee
        return try withUnsafePointer(to: &copy) { try body($0) }
    }
    return try withUnsafeTemporaryAllocation(of: A.self, capacity: 1) { buffer in
        let temporary = buffer.baseAddress.unsafelyUnwrapped
        // The bits are lent, not owned: they are never destroyed.
        UnsafeMutableRawPointer(temporary).copyMemory(from: pointer, byteCount: MemoryLayout<A>.size)
        return try body(temporary)
    }
}

/// Calls `body` with the value at `pointer` as its argument, passed where it lies: the
/// callee gets `pointer` itself, with neither a copy nor a bitwise copy of the value.
///
/// Why: a closure stored in a generic node takes its argument by address (a generic
/// argument is passed indirectly), so for a large value (a section of a screen) the bitwise
/// copy `withBorrowed` makes is most of a map's time. The optimizer passes an `inout`
/// argument's address on as the callee's argument, without a copy, because nothing
/// else may write the value during the access (`callLending`); a value that is not
/// `inout` it copies. `body` must be the user's closure itself, called as is: a closure
/// literal in between would get the value as its own argument, which a call from it
/// copies again (`withBorrowed` is for those).
///
/// An `inout` access is exclusive: no other access to the same memory, not even a read,
/// may overlap it (ThreadSanitizer reports two on different threads). So `pointer` must
/// point at memory that only the run reaches: a run's copy of its input
/// (`withPrivateCopy`, `Node.run(_:)`), a map's part, or a part of one of them read in
/// place (`FieldNode`), never at a caller's value, which others may read meanwhile. The
/// value outlives the call and nothing writes it during the call (see `withBorrowed`);
/// nothing writes it here either (`callLending` only reads it). The value does not move,
/// so any type may be lent so, bitwise takable or not.
@inlinable @inline(__always)
func callInPlace<A, R>(_ body: (A) throws -> R, at pointer: UnsafePointer<A>) rethrows -> R {
    try callLending(body, &UnsafeMutablePointer(mutating: pointer).pointee)
}

/// `body(value)`, with `value` borrowed from an exclusive access: see `callInPlace`.
@inlinable @inline(__always)
func callLending<A, R>(_ body: (A) throws -> R, _ value: inout A) rethrows -> R {
    try body(value)
}
