/// Where a loop's model lies: one allocation, at an address that does not change, so
/// that a step lends the model to the update and to the observers where it lies
/// (`withBorrowed`) and moves a new model into place. A copy would retain every
/// reference inside the model, and release them all again, at each step.
///
/// An object, so that the loop releases the last model with its stored properties, in
/// their order (after the update, the handlers and the inspector, before the observers,
/// the feedbacks and the sources), and a C type's `release` comes after the destroy
/// callbacks of those: a `deinit` of the loop that freed the cell would release the
/// model before any of them.
final class ModelCell<Model> {
    /// The model's place; valid for the cell's life.
    let pointer: UnsafeMutablePointer<Model>

    init(_ model: Model) {
        pointer = UnsafeMutablePointer<Model>.allocate(capacity: 1)
        pointer.initialize(to: model)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
