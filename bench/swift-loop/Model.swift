/// The loop benchmark's models, reducers and sink, shared by the library and the
/// hand-written baselines so that both do the same work per event.

/// A screen of 100 integer leaves; an event bumps one of them.
struct Leaves: Equatable {
    static let count = 100
    var values = [Int](repeating: 0, count: Leaves.count)
}

/// The trivial update of the render scenario: a new model with leaf `event % 100` bumped
/// (a copy, as an immutable model asks: the old model is still held by its owner).
@inline(__always)
func bump(_ model: Leaves, _ event: Int) -> Leaves {
    var next = model
    next.values[event % Leaves.count] &+= 1
    return next
}

/// The trivial update of the no-render scenario: a counter.
@inline(__always)
func add(_ model: Int, _ event: Int) -> Int {
    model &+ event
}

/// The model of the references scenario: state as an app holds it, with strings and
/// arrays, each a reference the runtime counts whenever the model is copied.
struct Profile: Equatable {
    var name = String(repeating: "n", count: 32)
    var tags = ["a tag long enough to live on the heap"]
    var scores = [Int](repeating: 0, count: 8)
    var visits = 0
}

/// An event of the references scenario: it carries a string on the heap.
struct Visit {
    var count: Int
    var page: String
}

/// The page every visit carries.
let visitedPage = String(repeating: "p", count: 32)

/// The update of the references scenario: a new model with one field changed (a copy).
@inline(__always)
func record(_ model: Profile, _ event: Visit) -> Profile {
    var next = model
    next.visits &+= event.count
    return next
}

/// The request of the observed scenario's feedback: which block of 2^30 visits the
/// model is in. It changes about once in 10,000 events of a measurement, as a request
/// changes far less often than the models that carry it.
@inline(__always)
func visitRequest(_ model: Profile) -> Int {
    model.visits >> 30
}

/// Cheap but not removable: folds a value into a global the program prints at the end.
nonisolated(unsafe) var sinkAccumulator: UInt64 = 0

@inline(never)
func sink(_ value: Int) {
    sinkAccumulator = sinkAccumulator &* 31 &+ UInt64(bitPattern: Int64(value))
}
