/// A first-in first-out queue in a circular buffer, for a loop's mailbox.
///
/// Why not an array: popping the first element of an array moves every other one, and
/// a loop pops once per event. Every element also has a running number that stays the
/// same while it is queued, so that keyed coalescing can find a queued event again and
/// replace it in place.
@usableFromInline
struct RingQueue<Element> {
    @usableFromInline var storage: [Element?] = []
    /// Where the first element is in `storage`.
    @usableFromInline var head = 0
    @usableFromInline var count = 0
    /// The running number of the first element; the k-th element has `firstNumber + k`.
    /// Starts high so that `pushFront` never goes below zero.
    @usableFromInline var firstNumber: UInt64 = 1 << 40

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// Appends `element` and returns its running number.
    @inlinable
    @discardableResult
    mutating func append(_ element: consuming Element) -> UInt64 {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
        return firstNumber + UInt64(count - 1)
    }

    /// Puts `element` before every other one.
    mutating func pushFront(_ element: Element) {
        if count == storage.count { grow() }
        head = (head + storage.count - 1) % storage.count
        storage[head] = element
        count += 1
        firstNumber -= 1
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head = (head + 1) % storage.count
        count -= 1
        firstNumber += 1
        return element
    }

    /// The element with running number `number`, which must be queued.
    @inlinable
    subscript(number number: UInt64) -> Element {
        get { storage[slot(of: number)]! }
        set { storage[slot(of: number)] = newValue }
    }

    /// Whether the element with running number `number` is still queued.
    @inlinable
    func contains(number: UInt64) -> Bool {
        number >= firstNumber && number < firstNumber + UInt64(count)
    }

    /// Removes the elements for which `shouldRemove` is true, keeping the order of the
    /// others, and returns the removed ones in order. Running numbers change.
    @discardableResult
    mutating func removeAll(where shouldRemove: (Element) -> Bool) -> [Element] {
        var kept: [Element] = []
        var removed: [Element] = []
        while let element = popFirst() {
            if shouldRemove(element) { removed.append(element) } else { kept.append(element) }
        }
        for element in kept { append(element) }
        return removed
    }

    @inlinable
    func slot(of number: UInt64) -> Int {
        (head + Int(number - firstNumber)) % storage.count
    }

    @usableFromInline
    mutating func grow() {
        let newCapacity = Swift.max(16, storage.count * 2)
        var grown = [Element?](repeating: nil, count: newCapacity)
        for k in 0..<count { grown[k] = storage[(head + k) % storage.count] }
        storage = grown
        head = 0
    }
}
