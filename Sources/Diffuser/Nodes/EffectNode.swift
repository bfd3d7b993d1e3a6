/// Runs an effect on every value: `intoAlways(effect)`. The effect borrows the value
/// where it lies (`withBorrowed`).
@usableFromInline
final class EffectNode<A, Effect: EffectFunction>: Node<A> where Effect.Value == A {
    @usableFromInline
    let effect: Effect

    @inlinable
    init(_ effect: Effect) {
        self.effect = effect
        super.init(step: { node, value, _ in
            let me = unsafeDowncast(node, to: EffectNode<A, Effect>.self)
            try withBorrowed(value) { try me.effect.run($0) }
        })
    }
}
