#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs its child on the first value, and afterwards only when `change.didChange(old,
/// new)` says so: `intoWhen(didChange, child)`. The equality gates `into` and `intoAll`
/// are this node with the predicate "not equal" (`Inequality`). The child is a node or,
/// for the combinators that take an effect, the effect itself (`Downstream`).
///
/// The cache holds the value of the previous successful run. Every successful run
/// replaces it with the new value, whether the child ran or not, and whether or not the
/// predicate found the two equal: so `old` is always the previous run's value, which is
/// what a predicate such as "increased", or an equality that is not transitive, needs.
/// A run that fails (in the predicate, in `keep`, or below the child) leaves the cache as
/// it was, so that the next run is compared with the same old value and retries.
@usableFromInline
final class GateNode<A, Change: ChangeFunction, Child: Downstream>: Node<A>
where Change.Value == A, Child.Value == A {
    @usableFromInline
    let change: Change
    @usableFromInline
    let child: Child
    /// The previous run's value; `nil` before the first successful run. Touched only by
    /// a pass, with the graph's serializer held.
    @usableFromInline @exclusivity(unchecked)
    var cache: A?

    /// A gate over `child` with `change`, which keeps each value with `change.keep`.
    /// `keepsItself` promises that this `change.keep` returns a value with the same bits
    /// as the one it is given and calls no user code, although its type does not say so
    /// (a C type without `retain`): see `pass`.
    @inlinable
    convenience init(_ change: Change, _ child: Child, keepsItself: Bool = false) {
        self.init(change, child, takesOwned: false, keepsItself: keepsItself)
    }

    /// `takesOwned` promises that `change.keep` is the value itself, so that the gate may
    /// exchange a value it is handed as owned (see `Node.Step`) with its cache instead of
    /// copying it. Called only by `init(_:_:)` and by `init(taking:_:)`, whose
    /// constraint (`KeepsItself`) makes the promise checked.
    @inlinable
    init(_ change: Change, _ child: Child, takesOwned: Bool, keepsItself: Bool = false) {
        self.change = change
        self.child = child
        if takesOwned {
            super.init(step: { node, value, owned in
                try unsafeDowncast(node, to: GateNode<A, Change, Child>.self)
                    .pass(value, taking: owned, keepsItself: true)
            })
        } else if keepsItself || Change.self is KeepsItself.Type {
            super.init(step: { node, value, _ in
                try unsafeDowncast(node, to: GateNode<A, Change, Child>.self)
                    .pass(value, taking: false, keepsItself: true)
            })
        } else {
            super.init(step: { node, value, _ in
                try unsafeDowncast(node, to: GateNode<A, Change, Child>.self)
                    .pass(value, taking: false, keepsItself: false)
            })
        }
    }

    /// The gate's step: compare with the previous value, run the child if it changed,
    /// keep the new value.
    ///
    /// The new value is compared where it lies (in its parent's value, for a part read
    /// in place) and copied only to be kept; the child gets it at the same address. With
    /// `take`, the value is owned and `keep` is the value itself: it is exchanged with
    /// the cache instead of copied, except into an empty cache (`keep(owned:)`).
    /// `keepsItself` promises that `change.keep` is the value itself and calls no user
    /// code (`KeepsItself`): only then may an equal value with the cache's very bits be
    /// left unkept, as keeping it would change nothing and call nothing.
    @inlinable @inline(__always)
    final func pass(_ value: UnsafePointer<A>, taking take: Bool, keepsItself: Bool) throws {
        if let old = cachedValue {
            let changed = try withBorrowed(old) { old in
                try withBorrowed(value) { try change.didChange(old, $0) }
            }
            if !changed {
                // Equal: keep the new value all the same, unless `keep` is the value
                // itself and this is the very value kept (the same bits), which storing
                // would not change. A `keep` that is user code (a C type's retain, an
                // equality's own `keep`) is called on every equal run, as it may fail or
                // count. An owned value with the same bits is left to its owner, which
                // destroys it: it holds its own references, the cache holds others.
                if keepsItself && sameBits(old, value) { return }
                if take { return keep(owned: value) }
                cache = try withBorrowed(value) { try change.keep($0) }
                return
            }
        }
        if take {
            try child.run(at: value)
            return keep(owned: value)
        }
        let kept = try withBorrowed(value) { try change.keep($0) }
        try child.run(at: value)
        cache = kept
    }

    /// Keeps a value handed over as owned: exchanges it with the cached value, which its
    /// owner then destroys in its place, or copies it into an empty cache (the first run).
    @inlinable @inline(__always)
    final func keep(owned value: UnsafePointer<A>) {
        let new = UnsafeMutablePointer(mutating: value)
        if let old = cachedValue {
            swap(&UnsafeMutablePointer(mutating: old).pointee, &new.pointee)
        } else {
            cache = new.pointee
        }
    }

    /// The cached value where it lies, or `nil` if there is none: read in place, so that
    /// a comparison does not copy it (a copy retains every reference inside it).
    ///
    /// Valid until the cache is next written; `cache` is a final stored property of this
    /// object, so the address is the same for the object's whole life. An `Optional`'s
    /// payload lies at the start of its storage.
    @inlinable
    final var cachedValue: UnsafePointer<A>? {
        if cache == nil { return nil }
        return withUnsafeMutablePointer(to: &cache) { UnsafeRawPointer($0).assumingMemoryBound(to: A.self) }
    }

    override func forEachChild(_ body: (AnyNode) -> Void) {
        if let node = child.childNode { body(node) }
    }
}

/// "Not equal" by an equality: the predicate of the gates of `into` and `intoAll`.
@usableFromInline
struct Inequality<Equality: EqualityFunction>: ChangeFunction {
    @usableFromInline
    let equality: Equality

    @inlinable
    init(_ equality: Equality) {
        self.equality = equality
    }

    @inlinable @inline(__always)
    func didChange(_ old: Equality.Value, _ new: Equality.Value) throws -> Bool {
        try !equality.equals(old, new)
    }

    @inlinable @inline(__always)
    func keep(_ value: Equality.Value) throws -> Equality.Value {
        try equality.keep(value)
    }
}

/// Whether the values at `kept` and `value` have the same bytes: then they are the same
/// value (the same references, the same contents), and writing one over the other would
/// change nothing.
///
/// A value of whole words is compared a word at a time. The new value has often just
/// been written, a word at a time, by the node that made it (a map's part); a wider load
/// of it (what `memcmp` of 16 bytes becomes) cannot take its bytes from those pending
/// stores and waits for them to reach the cache, which made this test most of a gate's
/// time.
@inlinable @inline(__always)
func sameBits<A>(_ kept: UnsafePointer<A>, _ value: UnsafePointer<A>) -> Bool {
    let size = MemoryLayout<A>.size
    let word = MemoryLayout<UInt>.size
    guard size % word == 0 else { return memcmp(kept, value, size) == 0 }
    // Unaligned loads: a part read in place may lie at any offset of its parent (a field
    // of a packed C struct); where it is aligned they are the ordinary loads.
    let a = UnsafeRawPointer(kept), b = UnsafeRawPointer(value)
    var offset = 0
    while offset < size {
        if a.loadUnaligned(fromByteOffset: offset, as: UInt.self)
            != b.loadUnaligned(fromByteOffset: offset, as: UInt.self) {
            return false
        }
        offset += word
    }
    return true
}

extension GateNode where Change: KeepsItself {
    /// A gate whose predicate keeps values as they are: it exchanges a value handed to it
    /// as owned with its cache instead of copying it.
    @inlinable
    convenience init(taking change: Change, _ child: Child) {
        self.init(change, child, takesOwned: true)
    }
}
