/// Runs every child, in order, on every value: `intoAlways(children)`.
///
/// Child `i + 1` starts only after child `i` finished, everything below it included; the
/// first child that throws stops the fan-out, and later children do not run.
@usableFromInline
final class FanOutNode<A>: Node<A> {
    @usableFromInline
    let children: [Node<A>]

    @inlinable
    init(_ children: [Node<A>]) {
        self.children = children
        super.init(step: { node, value in
            for child in unsafeDowncast(node, to: FanOutNode<A>.self).children {
                try child.run(at: value)
            }
        })
    }

    override func forEachChild(_ body: (AnyNode) -> Void) {
        for child in children { body(child) }
    }
}
