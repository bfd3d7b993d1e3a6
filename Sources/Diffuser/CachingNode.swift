/// A node that keeps a value between passes: the base of the equality gates (`into`,
/// `intoAll`) and of `intoWhen`.
///
/// `Cached` is always `A?`, the type of the cache (every kind binds it so: a gate is a
/// `GateNode<A, A?>`, `intoWhen` a `CachingNode<A, A?>`). It is a parameter of its own
/// so that destroying the node, which runs unspecialized, finds the cache's metadata
/// among the class's generic arguments: a field of type `A?` made every such node's
/// deinit look up the metadata of `Optional<A>` in the runtime's hash table, the larger
/// part of freeing a tree.
@usableFromInline
class CachingNode<A, Cached>: Node<A> {
    /// The value kept, `nil` before the first. In the node kinds, which bind `Cached` to
    /// `A?`, it is an `A?`; in generic code, see `cachePointer`.
    @usableFromInline @exclusivity(unchecked)
    final var cache: Cached

    /// `empty` is `nil` as a `Cached`, that is, as an `A?`.
    @inlinable
    init(step: @escaping Step, empty: Cached) {
        assert(Cached.self == A?.self, "a caching node caches an A?")
        cache = empty
        super.init(step: step)
    }

    /// The cache, where it lies, as the `A?` it is: for generic code, where `cache` is
    /// a `Cached`.
    ///
    /// The address outlives the `withUnsafeMutablePointer` call that finds it, which is
    /// sound here: `cache` is a final stored property of a class instance, with no
    /// observers and no exclusivity checks, so it is the same memory for the object's
    /// whole life, and only a pass (holding the graph's lock) reads or writes it.
    @inlinable
    @inline(__always)
    final var cachePointer: UnsafeMutablePointer<A?> {
        withUnsafeMutablePointer(to: &cache) { UnsafeMutableRawPointer($0).assumingMemoryBound(to: A?.self) }
    }
}
