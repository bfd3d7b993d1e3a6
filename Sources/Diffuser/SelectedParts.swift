/// The parts a selection makes for a fan-out of maps (`mapAll`): room for one part per
/// child, filled in the children's order.
///
/// The room belongs to the fan-out, which keeps it from pass to pass, so selecting
/// allocates nothing; the fan-out runs each child on its part, then destroys the parts.
/// The type cannot be copied, so the parts cannot outlive the call they are lent to.
public struct SelectedParts<Element>: ~Copyable {
    @usableFromInline
    let base: UnsafeMutablePointer<Element>
    @usableFromInline
    var made: Int

    /// The number of children: at most this many parts are kept.
    public let capacity: Int

    /// Room for `capacity` parts at `base`, uninitialized; the caller destroys the parts
    /// made (`destroyAll()`) before it reuses or frees the room.
    @inlinable
    init(_ base: UnsafeMutablePointer<Element>, capacity: Int) {
        self.base = base
        self.capacity = capacity
        self.made = 0
    }

    /// The number of parts made so far.
    @inlinable
    public var count: Int { made }

    /// Whether every child has its part; `append(_:)` ignores further parts.
    @inlinable
    public var isFull: Bool { made == capacity }

    /// Makes `part` the part of the next child; ignored once every child has one.
    @inlinable
    public mutating func append(_ part: consuming Element) {
        guard made < capacity else { return }
        (base + made).initialize(to: part)
        made &+= 1
    }

    /// Makes `part(i)` the part of the next child, for each `i` below `count`, in order:
    /// `append(_:)` in a loop, for a selection that hands over many parts at once.
    /// Parts past the capacity are ignored (and not asked for).
    @inlinable
    public mutating func append(count: Int, _ part: (Int) throws -> Element) rethrows {
        let start = made
        let end = start + min(max(count, 0), capacity - start)
        var next = start
        defer { made = next }
        while next < end {
            (base + next).initialize(to: try part(next &- start))
            next &+= 1
        }
    }

    /// The part of child `index`, which must have been made.
    @inlinable
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < made, "part \(index) has not been made")
        return base[index]
    }

    /// The parts `body` makes in room for `capacity` of them, in order: a selection
    /// called outside a fan-out, as a test of it would.
    ///
    ///     let parts = try SelectedParts<Int>.collect(capacity: 3) { try selection.selectAll(7, into: &$0) }
    @inlinable
    public static func collect(
        capacity: Int, _ body: (inout SelectedParts<Element>) throws -> Void
    ) rethrows -> [Element] {
        precondition(capacity >= 0, "a negative capacity")
        let room = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        defer { room.deallocate() }
        var parts = SelectedParts(room, capacity: capacity)
        defer { parts.destroyAll() }
        try body(&parts)
        return Array(UnsafeBufferPointer(start: room, count: parts.count))
    }

    /// Empties the room for the next pass without destroying the parts made: only for
    /// parts that are trivial to destroy (`SelectionFunction.makesTrivialParts`).
    @inlinable
    mutating func forgetAll() {
        made = 0
    }

    /// Destroys the parts made and empties the room for the next pass.
    @inlinable
    mutating func destroyAll() {
        // One by one: `deinitialize(count:)` goes through the runtime's generic array
        // destruction, which costs more than the few parts a fan-out has.
        for i in 0..<made { _ = (base + i).move() }
        made = 0
    }
}
