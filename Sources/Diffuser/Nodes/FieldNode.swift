/// Feeds its child a stored property of the value, read where it lies:
/// `map(\.title, child)` when `title` is stored in the value's own storage.
///
/// `MemoryLayout<A>.offset(of: keyPath)` answers for exactly those key paths (a chain of
/// stored properties of structs and tuples, no computed step, no class reference); the
/// part then lies at that offset in every value of type `A`. The child gets the part's
/// address within the parent's value, so an unchanged part is compared with its gate's
/// cache in place and never copied (as a C field map reads a field). Projecting such a
/// key path has no effect besides the read, so reading in place is the key path's
/// projection, done without calling into the key-path runtime.
@usableFromInline
final class FieldNode<A, B>: Node<A> {
    /// The part's offset in bytes from the start of an `A`.
    @usableFromInline
    let offset: Int
    @usableFromInline
    let child: Node<B>

    @inlinable
    init(offset: Int, _ child: Node<B>) {
        self.offset = offset
        self.child = child
        super.init(step: { node, value, _ in
            let me = unsafeDowncast(node, to: FieldNode<A, B>.self)
            let part = UnsafeRawPointer(value).advanced(by: me.offset).assumingMemoryBound(to: B.self)
            try me.child.run(at: part)
        })
    }

    override func forEachChild(_ body: (AnyNode) -> Void) { body(child) }
}
