import Dispatch
import XCTest
@testable import Diffuser

/// The loop's model is lent to the update and to observers where it lies, and a new
/// model is moved into place: these tests check that every model is still released
/// exactly once, at the right time, and that what a released model frees may use the
/// loop.
final class LoopModelOwnershipTests: XCTestCase {
    /// Something a model holds, counted while alive; its `onRelease` runs in its deinit.
    final class Part: @unchecked Sendable {
        /// The parts made (positive ids) and freed (negated ids), in order.
        static let log = Recorder<Int>()
        let id: Int
        var onRelease: (@Sendable (Int) -> Void)?

        init(_ id: Int) {
            self.id = id
            Part.log.append(id)
        }

        deinit {
            Part.log.append(-id)
            onRelease?(id)
        }

        /// The parts alive now; fails if a part was freed twice.
        static var alive: [Int] {
            var alive: [Int] = []
            for id in log.values {
                if id > 0 {
                    alive.append(id)
                } else if let index = alive.firstIndex(of: -id) {
                    alive.remove(at: index)
                } else {
                    XCTFail("part \(-id) freed twice")
                }
            }
            return alive
        }
    }

    struct Model: Sendable {
        var part: Part
        var title: String
        var items: [Int]
    }

    override func setUp() {
        super.setUp()
        Part.log.clear()
    }

    /// Every model a loop stored is released once it is replaced, and the last one when
    /// the loop goes away; the update and the observers see each model as stored.
    func testEveryModelIsReleasedOnceAndTheLastWithTheLoop() {
        let seen = Recorder<String>()
        do {
            let loop = Loop<Model, Int, Never>(model: Model(part: Part(100), title: "m0", items: [0]), reducer: { model, event in
                seen.append("update \(model.part.id) \(model.title) \(model.items)")
                return Model(part: Part(event), title: "m\(event)", items: model.items + [event])
            })
            let observing = loop.subscribe { model in seen.append("observe \(model.part.id) \(model.title)") }
            for event in 1...3 { loop.dispatch(event) }
            XCTAssertEqual(Part.alive, [3], "each replaced model's part was released")
            XCTAssertEqual(loop.model.title, "m3")
            observing.dispose()
        }
        XCTAssertEqual(Part.alive, [], "the loop released its last model")
        XCTAssertEqual(seen.values, [
            "observe 100 m0",
            "update 100 m0 [0]", "observe 1 m1",
            "update 1 m1 [0, 1]", "observe 2 m2",
            "update 2 m2 [0, 1, 2]", "observe 3 m3",
        ])
    }

    /// A model replaced by a step is released after the loop's lock is given back: what
    /// it frees may read the loop's model and dispatch to it. Released under the lock,
    /// the read would never return.
    func testWhatAReplacedModelFreesMayUseTheLoop() {
        let released = Recorder<String>()
        let loop = Loop<Model, Int, Never>(model: Model(part: Part(100), title: "m0", items: []), reducer: { model, event in
            var next = model
            next.part = Part(event)
            next.title = "m\(event)"
            return next
        })
        weak let weakLoop = loop
        let part = loop.model.part
        part.onRelease = { id in
            guard let loop = weakLoop else { return }
            released.append("part \(id) released; the loop holds \(loop.model.title)")
            loop.dispatch(2)
        }
        // The test's own reference goes first, so that the step's release is the last.
        _ = consume part
        guard returnsInTime("the step's release of the old model did not return", holding: loop, {
            loop.dispatch(1)
        }) else { return }
        XCTAssertEqual(released.values, ["part 100 released; the loop holds m1"])
        XCTAssertEqual(loop.model.title, "m2", "the event dispatched from the release was handled")
    }

    /// A failing update, an update that keeps the model, and a stopped loop leave the
    /// stored model as it was, released once in the end.
    func testAModelKeptThroughFailuresAndStopsIsReleasedOnce() {
        struct Failure: Error {}
        do {
            let loop = Loop<Model, Int, Never>(
                model: Model(part: Part(100), title: "m0", items: []),
                update: Update { model, event in
                    switch event {
                    case 0: throw Failure()
                    case 1: return .noChange
                    default: return .next(Model(part: Part(event), title: "m\(event)", items: model.items + [event]))
                    }
                }
            )
            loop.dispatch(0)
            loop.dispatch(1)
            XCTAssertEqual(Part.alive, [100])
            XCTAssertEqual(loop.model.title, "m0")
            loop.dispatch(5)
            loop.stop()
            XCTAssertEqual(Part.alive, [5])
            loop.start()
            loop.dispatch(6)
            XCTAssertEqual(Part.alive, [6])
            XCTAssertEqual(loop.model.items, [5, 6])
        }
        XCTAssertEqual(Part.alive, [])
    }

    /// A model replaced by a step is released once the step is over, after the step's
    /// observers, feedbacks and handlers: what its last reference frees (a deinit, a C
    /// type's release) never comes between the calls of a step, and a release that
    /// stops the loop still lets the step publish its model and hand over its effects.
    func testAReplacedModelIsReleasedOnceItsStepIsOver() {
        let calls = Recorder<String>()
        let loop = Loop<Model, Int, String>(
            model: Model(part: Part(100), title: "m0", items: []),
            update: Update { model, event in
                calls.append("update \(model.title)")
                return .next(Model(part: Part(event), title: "m\(event)", items: []), effects: ["effect \(event)"])
            },
            handlers: [EffectHandler { effect, _ in calls.append("handle \(effect)") }],
            feedbacks: [.react { model in
                calls.append("feedback \(model.title)")
                return []
            }]
        )
        let observing = loop.subscribe { model in calls.append("observe \(model.title)") }
        weak let weakLoop = loop
        loop.model.part.onRelease = { id in
            calls.append("release \(id)")
            weakLoop?.stop()
        }
        loop.dispatch(1)
        XCTAssertEqual(calls.values, [
            "feedback m0", "observe m0",
            "update m0", "feedback m1", "observe m1", "handle effect 1", "release 100",
        ])
        XCTAssertFalse(loop.isRunning, "the release stopped the loop")
        XCTAssertEqual(Part.alive, [1])
        observing.dispose()
    }

    /// The kept model that a restart's first model replaces is released after the loop's
    /// lock is given back too: what it frees may read the loop's model. Released under
    /// the lock, the read would never return.
    func testWhatAModelReplacedAtARestartFreesMayUseTheLoop() {
        let released = Recorder<String>()
        let loop = Loop<Model, Int, Never>(
            model: Model(part: Part(100), title: "m0", items: []),
            update: Update { _, _ in .noChange },
            restart: { _ in First(Model(part: Part(200), title: "restarted", items: [])) }
        )
        weak let weakLoop = loop
        let part = loop.model.part
        part.onRelease = { id in
            guard let loop = weakLoop else { return }
            released.append("part \(id) released; the loop holds \(loop.model.title)")
        }
        loop.stop()
        // The test's own reference goes first, so that the start's release is the last.
        _ = consume part
        guard returnsInTime("the start's release of the kept model did not return", holding: loop, {
            loop.start()
        }) else { return }
        XCTAssertEqual(released.values, ["part 100 released; the loop holds restarted"])
        XCTAssertEqual(Part.alive, [200])
    }

    /// A model whose values may not move in memory (a weak reference inside: not bitwise
    /// takable) is lent as a copy (`withBorrowed`'s other way): the update and the
    /// observers still see each model as stored, and every model is released once.
    func testAModelThatMayNotMoveIsLentAsACopyAndReleasedOnce() {
        struct Pinned: @unchecked Sendable {
            weak var target: Part?
            var part: Part
            var title: String
        }
        XCTAssertFalse(_isBitwiseTakable(Pinned.self), "the test lends the model the copying way")
        let target = Part(50)
        let seen = Recorder<String>()
        do {
            let loop = Loop<Pinned, Int, Never>(model: Pinned(target: target, part: Part(100), title: "m0"), reducer: { model, event in
                seen.append("update \(model.part.id) \(model.title) target \(model.target?.id ?? 0)")
                return Pinned(target: model.target, part: Part(event), title: "m\(event)")
            })
            let observing = loop.subscribe { model in
                seen.append("observe \(model.part.id) \(model.title) target \(model.target?.id ?? 0)")
            }
            for event in 1...2 { loop.dispatch(event) }
            XCTAssertEqual(Part.alive, [50, 2])
            observing.dispose()
        }
        XCTAssertEqual(Part.alive, [50], "the loop released its last model, and nothing it only saw weakly")
        XCTAssertEqual(seen.values, [
            "observe 100 m0 target 50",
            "update 100 m0 target 50", "observe 1 m1 target 50",
            "update 1 m1 target 50", "observe 2 m2 target 50",
        ])
        withExtendedLifetime(target) {}
    }

    /// A loop whose update lets go of the loop's last reference: the loop is disposed from
    /// inside the step, and the model lent to the update stays valid until the update
    /// returns, because the drain holds the loop's engine. The model is released once,
    /// when the drain lets go.
    func testAnUpdateMayLetGoOfItsLoop() {
        final class Holder: @unchecked Sendable {
            var loop: Loop<Model, Int, Never>?
        }
        let holder = Holder()
        let executor = ManualExecutor()
        let seen = Recorder<String>()
        holder.loop = Loop<Model, Int, Never>(
            model: Model(part: Part(100), title: "m0", items: [1, 2]),
            update: Update { model, event in
                holder.loop = nil
                seen.append("after the last reference: \(model.part.id) \(model.title) \(model.items)")
                return .next(Model(part: Part(event), title: "m\(event)", items: []))
            },
            executor: executor,
            inspector: { trace in
                switch trace {
                case .started: seen.append("started")
                case .disposed(let model): seen.append("disposed \(model.title)")
                case let .stepped(event, model, _): seen.append("stepped \(event) on \(model.title)")
                default: seen.append("unexpected \(trace)")
                }
            }
        )
        _ = executor.runAll()
        holder.loop?.dispatch(1)
        _ = executor.runAll()
        XCTAssertNil(holder.loop)
        XCTAssertEqual(seen.values, [
            "started", "disposed m0", "after the last reference: 100 m0 [1, 2]", "stepped 1 on m0",
        ])
        XCTAssertEqual(Part.alive, [], "the step's model and the loop's were released")
    }
}
