/// The baselines: what a programmer writes without the library. A first-in first-out
/// queue drained by the thread that dispatches into an idle loop (so an event sent
/// during a step waits its turn, as in the library), the reducer called directly, and a
/// render that compares 100 cached leaves by hand. Single-threaded: no lock.

/// A ring buffer of events.
struct EventQueue {
    private var slots = [Int](repeating: 0, count: 16)
    private var head = 0
    private var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func push(_ event: Int) {
        if count == slots.count {
            var grown = [Int](repeating: 0, count: slots.count * 2)
            for k in 0..<count { grown[k] = slots[(head + k) % slots.count] }
            slots = grown
            head = 0
        }
        slots[(head + count) % slots.count] = event
        count += 1
    }

    mutating func pop() -> Int {
        let event = slots[head]
        head = (head + 1) % slots.count
        count -= 1
        return event
    }
}

/// Queue + reducer + a render: the hand-written one (`HandRender`), or a Diffuser's run
/// (to tell the loop's share from the Diffuser's).
final class HandRenderLoop {
    private(set) var model = Leaves()
    private var queue = EventQueue()
    private var draining = false
    private let render: (Leaves) -> Void

    init(render: @escaping (Leaves) -> Void) {
        self.render = render
        render(model)
    }

    func dispatch(_ event: Int) {
        queue.push(event)
        if draining { return }
        draining = true
        while !queue.isEmpty {
            model = bump(model, queue.pop())
            render(model)
        }
        draining = false
    }
}

/// 100 cached leaves compared by hand: runs the sink for each leaf that differs from the
/// one rendered last (every leaf the first time).
final class HandRender {
    private var cache = [Int](repeating: 0, count: Leaves.count)
    private var rendered = false

    func render(_ model: Leaves) {
        let first = !rendered
        rendered = true
        for i in 0..<Leaves.count where first || cache[i] != model.values[i] {
            cache[i] = model.values[i]
            sink(model.values[i])
        }
    }
}

/// The floor of the render: the least any implementation of the Diffuser API does with
/// the screen it is given, calling each leaf's selector (the very closures the library's
/// maps get) and comparing the value with the one rendered last, with nothing of a
/// library around them.
final class FloorRender {
    /// A selector in an object of its own, held unretained: a closure read from an array
    /// is retained and released around each call, which a library holding it in a node
    /// (a `let` of an object it runs) does not pay.
    private final class Selector {
        let select: (Leaves) -> Int
        init(_ select: @escaping (Leaves) -> Int) { self.select = select }
    }

    private let selectors: [Unmanaged<Selector>]
    private var cache = [Int](repeating: 0, count: Leaves.count)
    private var rendered = false

    init(_ selectors: [(Leaves) -> Int]) {
        self.selectors = selectors.map { Unmanaged.passRetained(Selector($0)) }
    }

    deinit {
        for selector in selectors { selector.release() }
    }

    func render(_ model: Leaves) {
        let first = !rendered
        rendered = true
        // Through buffers: no uniqueness check of the cache on each write.
        selectors.withUnsafeBufferPointer { selectors in
            cache.withUnsafeMutableBufferPointer { cache in
                for i in selectors.indices {
                    let value = selectors[i]._withUnsafeGuaranteedRef { $0.select(model) }
                    if first || cache[i] != value {
                        cache[i] = value
                        sink(value)
                    }
                }
            }
        }
    }
}

/// Queue + reducer, nothing rendered.
final class HandCounterLoop {
    private(set) var model = 0
    private var queue = EventQueue()
    private var draining = false

    /// Always inlined: the scenarios that share this baseline then measure the same
    /// code, whatever the optimizer would decide at each call.
    @inline(__always)
    func dispatch(_ event: Int) {
        queue.push(event)
        if draining { return }
        draining = true
        while !queue.isEmpty { model = add(model, queue.pop()) }
        draining = false
    }
}

/// Queue + reducer, and each event's effect (the event itself) handed to the sink after
/// the reducer, as the effects scenario's handler does.
final class HandEffectsLoop {
    private(set) var model = 0
    private var queue = EventQueue()
    private var draining = false

    func dispatch(_ event: Int) {
        queue.push(event)
        if draining { return }
        draining = true
        while !queue.isEmpty {
            let event = queue.pop()
            model = add(model, event)
            sink(event)
        }
        draining = false
    }
}

/// Queue + reducer over the references scenario's model and events; if `observed`,
/// each new model's request and visits go to the sink when they changed, as the
/// observed scenario's feedback and observer do.
final class HandProfileLoop {
    private(set) var model = Profile()
    private var queue: [Visit] = []
    private var draining = false
    private let observed: Bool
    private var lastRequest: Int?
    private var lastVisits: Int?

    init(observed: Bool = false) {
        self.observed = observed
        if observed { observe() }
    }

    func dispatch(_ event: Visit) {
        queue.append(event)
        if draining { return }
        draining = true
        var next = 0
        while next < queue.count {
            model = record(model, queue[next])
            if observed { observe() }
            next += 1
        }
        queue.removeAll(keepingCapacity: true)
        draining = false
    }

    private func observe() {
        let request = visitRequest(model)
        if request != lastRequest {
            lastRequest = request
            sink(request)
        }
        if model.visits != lastVisits {
            lastVisits = model.visits
            sink(model.visits)
        }
    }
}
