/// Runs its child on the first value only: `intoOnce`.
///
/// If that first run fails, the next value is treated as the first.
@usableFromInline
final class OnceNode<A, Child: Downstream>: Node<A> where Child.Value == A {
    @usableFromInline
    let child: Child
    @usableFromInline @exclusivity(unchecked)
    var done = false

    @inlinable
    init(_ child: Child) {
        self.child = child
        super.init(step: { node, value, _ in
            let me = unsafeDowncast(node, to: OnceNode<A, Child>.self)
            if me.done { return }
            try me.child.run(at: value)
            me.done = true
        })
    }

    override func forEachChild(_ body: (AnyNode) -> Void) {
        if let node = child.childNode { body(node) }
    }
}
