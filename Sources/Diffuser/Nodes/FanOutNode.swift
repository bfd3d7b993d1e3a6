/// Runs every child, in order, on every value: `intoAlways(children)`.
///
/// Child `i + 1` starts only after child `i` finished, everything below it included; the
/// first child that throws stops the fan-out, and later children do not run.
@usableFromInline
final class FanOutNode<A>: Node<A> {
    /// The children, each retained once by this node for its whole life (released in
    /// `deinit`). Held unmanaged so that a pass calls each child without retaining and
    /// releasing it: `children` never changes, and the node outlives every pass through it.
    @usableFromInline
    let children: [Unmanaged<Node<A>>]

    /// A fan-out over the nodes of `children`, taken from the diffusers directly (an
    /// intermediate array of nodes would retain and release every child once more).
    @inlinable
    init(_ children: [Diffuser<A>]) {
        self.children = children.map { Unmanaged.passRetained($0.node) }
        super.init(step: { node, value, _ in
            try unsafeDowncast(node, to: FanOutNode<A>.self).children.withUnsafeBufferPointer { children in
                for child in children {
                    try child._withUnsafeGuaranteedRef { try $0.run(at: value) }
                }
            }
        })
    }

    deinit {
        for child in children { child.release() }
    }

    override func forEachChild(_ body: (AnyNode) -> Void) {
        for child in children { body(child.takeUnretainedValue()) }
    }
}
