/// Runs an effect on every value: `intoAlways(effect)`.
@usableFromInline
final class EffectNode<A, Effect: EffectFunction>: Node<A> where Effect.Value == A {
    @usableFromInline
    let effect: Effect

    @inlinable
    init(_ effect: Effect) {
        self.effect = effect
        super.init(step: { node, value in
            try unsafeDowncast(node, to: EffectNode<A, Effect>.self).effect.run(value)
        })
    }
}
