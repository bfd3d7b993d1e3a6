/// Where a loop's model lies: one allocation, at an address that does not change, so
/// that a step lends the model to the update and to the observers where it lies
/// (`withBorrowed`) and moves a new model into place. A copy would retain every
/// reference inside the model, and release them all again, at each step.
///
/// An object, held by the loop where its model was once a stored property: the last
/// model is released at the same point of the loop's teardown as before (after the
/// update, the handlers and the inspector are released, before the observers, the
/// feedbacks and the sources), so that a C type's `release` keeps its place among the
/// destroy callbacks.
@usableFromInline
final class ModelCell<Model> {
    /// The model's place; valid for the cell's life.
    @usableFromInline let pointer: UnsafeMutablePointer<Model>

    init(_ model: Model) {
        pointer = UnsafeMutablePointer<Model>.allocate(capacity: 1)
        pointer.initialize(to: model)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
