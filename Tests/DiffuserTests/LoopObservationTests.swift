import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// Observing loops, properties, signals: current value first, distinct parts, owners,
/// rendering, disposal.
final class LoopObservationTests: XCTestCase {
    func testObserveSendsTheCurrentModelFirst() {
        let loop = Loop(model: Counter(count: 4), update: counterUpdate)
        loop.dispatch(.increment)
        let seen = Recorder<Int>()
        loop.observe { seen.append($0.count) }
        loop.dispatch(.increment)
        XCTAssertEqual(seen.values, [5, 6])
    }

    func testObserveAKeyPathSkipsEqualParts() {
        let loop = Loop(model: Counter(), update: counterUpdate)
        let counts = Recorder<Int>()
        let requests = Recorder<String?>()
        loop.observe(\.count) { counts.append($0) }
        loop.observe(\.request) { requests.append($0) }
        loop.dispatch(.request("a"))
        loop.dispatch(.increment)
        loop.dispatch(.request("a"))
        loop.dispatch(.add(0))
        XCTAssertEqual(counts.values, [0, 1])
        XCTAssertEqual(requests.values, [nil, "a"])
    }

    func testObserveASelectorSkipsEqualParts() {
        let loop = Loop(model: Counter(), update: counterUpdate)
        let parities = Recorder<Bool>()
        loop.observe(select: { $0.count % 2 == 0 }) { parities.append($0) }
        for _ in 0..<4 { loop.dispatch(.add(2)) }
        loop.dispatch(.increment)
        XCTAssertEqual(parities.values, [true, false])
    }

    func testObserveWithAnOwnerEndsWithTheOwner() {
        let loop = Loop(model: Counter(), update: counterUpdate)
        let seen = Recorder<String>()
        var owner: Owner? = Owner("view")
        loop.observe(with: owner!) { owner, model in seen.append("\(owner.name) \(model.count)") }
        loop.observe(\.count, with: owner!) { owner, count in seen.append("\(owner.name) count \(count)") }
        weak let weakOwner = owner
        loop.dispatch(.increment)
        owner = nil
        XCTAssertNil(weakOwner, "the loop does not keep the owner alive")
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        XCTAssertEqual(seen.values, ["view 0", "view count 0", "view 1", "view count 1"])
    }

    func testRenderThroughADiffuser() {
        let loop = Loop(model: Counter(), update: counterUpdate)
        let log = Recorder<String>()
        loop.render(Diffuser<Counter>(
            .map(\.count, .into { log.append("count \($0)") }),
            .map(\.request, .into { log.append("request \($0 ?? "-")") })
        ))
        loop.dispatch(.increment)
        loop.dispatch(.request("x"))
        loop.dispatch(.request("x"))
        XCTAssertEqual(log.values, ["count 0", "request -", "count 1", "request x"])
    }

    func testDisposedObserverHearsNothingMoreEvenFromInside() {
        let loop = Loop(model: Counter(), update: counterUpdate)
        let seen = Recorder<String>()
        let outer = loop.observe { seen.append("outer \($0.count)") }
        var selfDisposing: _Disposable?
        selfDisposing = loop.observe { model in
            seen.append("inner \(model.count)")
            if model.count == 1 { selfDisposing?.dispose() }
        }
        loop.dispatch(.increment)
        loop.dispatch(.increment)
        outer.dispose()
        outer.dispose()
        loop.dispatch(.increment)
        XCTAssertEqual(seen.values, ["outer 0", "inner 0", "outer 1", "inner 1", "outer 2"])
        selfDisposing = nil
    }

    /// Observers and feedbacks added later come after those added before, whatever
    /// their kind.
    func testObserversAndFeedbacksInRegistrationOrder() {
        let log = Recorder<String>()
        let loop = Loop(model: Counter(), update: counterUpdate)
        loop.observe { log.append("a \($0.count)") }
        loop.add(.react { log.append("b \($0.count)"); return [] })
        loop.observe(\.count) { log.append("c \($0)") }
        log.clear()
        loop.dispatch(.increment)
        XCTAssertEqual(log.values, ["a 1", "b 1", "c 1"])
    }

    // MARK: Property

    final class ViewModel {
        @Property var items: [String] = []
        @Property private(set) var title = "Minimalist"
        func rename(_ title: String) { self.title = title }
    }

    func testPropertyAsAPropertyWrapper() {
        let viewModel = ViewModel()
        let owner = Owner("vc")
        let seen = Recorder<String>()
        viewModel.$items.observe(with: owner) { owner, items in seen.append("\(owner.name) \(items)") }
        viewModel.$items.observe(\.count) { seen.append("count \($0)") }
        viewModel.$title.observe { seen.append("title \($0)") }
        viewModel.items = ["a"]
        viewModel.items = ["b"]
        viewModel.rename("Maximalist")
        XCTAssertEqual(viewModel.items, ["b"])
        XCTAssertEqual(viewModel.title, "Maximalist")
        XCTAssertEqual(seen.values, [
            "vc []", "count 0", "title Minimalist",
            "vc [\"a\"]", "count 1",
            "vc [\"b\"]",
            "title Maximalist",
        ])
    }

    func testPropertyValueStoredFromAnObserverIsDeliveredAfter() {
        let property = Property(0)
        let seen = Recorder<String>()
        property.observe { value in
            seen.append("first \(value)")
            if value == 1 {
                property.value = 2
                seen.append("stored \(property.value)")
            }
        }
        property.observe { seen.append("second \($0)") }
        property.value = 1
        XCTAssertEqual(seen.values, ["first 0", "second 0", "first 1", "stored 2", "second 1", "first 2", "second 2"])
    }

    func testPropertyModifyFromManyThreadsLosesNothing() {
        let property = Property(0)
        let seen = Recorder<Int>()
        property.observe { seen.append($0) }
        onThreads(8) { _ in
            for _ in 0..<500 { property.modify { $0 += 1 } }
        }
        XCTAssertEqual(property.value, 4_000)
        XCTAssertEqual(seen.values, Array(0...4_000), "every value, once, in order")
    }

    /// A transform may use its own property: it reads the value as it was, a value it
    /// stores is delivered first and its result replaces it, and an observer it adds
    /// hears the value as it was, then the result. Before, each of these waited forever for the lock the
    /// transform runs under.
    func testPropertyModifyMayUseItsProperty() {
        let property = Property(1)
        let seen = Recorder<String>()
        property.observe { seen.append("first \($0)") }
        let done = DispatchSemaphore(value: 0)
        Thread {
            property.modify { $0 += property.value }                  // 1 + 1
            property.modify { value in
                property.value = 10                                   // delivered, then replaced
                property.modify { $0 += 100 }                         // nested: 110, then replaced
                value *= 3                                            // 2 * 3
            }
            property.modify { _ in property.observe { seen.append("late \($0)") } }
            done.signal()
        }.start()
        guard done.wait(timeout: .now() + 10) == .success else {
            return XCTFail("a transform waited for its own property")   // which stays locked
        }
        XCTAssertEqual(property.value, 6)
        XCTAssertEqual(seen.values, ["first 1", "first 2", "first 10", "first 110", "first 6", "late 6", "first 6", "late 6"])
    }

    /// A transform that stores into its property or observes it and then throws: its
    /// result is not stored, and what it did meanwhile is delivered at once.
    func testPropertyModifyThrowingAfterUsingItsProperty() {
        struct Boom: Error {}
        let property = Property(0)
        let seen = Recorder<Int>()
        let observation = property.subscribe { seen.append($0) }
        XCTAssertThrowsError(try property.modify { value in
            property.value = 5
            value = 99
            throw Boom()
        })
        XCTAssertEqual(property.value, 5, "the value stored inside stands; the result is not stored")
        XCTAssertEqual(seen.values, [0, 5], "observers hear it at once")
        let late = Recorder<Int>()
        var lateObservation: _Disposable?
        XCTAssertThrowsError(try property.modify { _ in
            lateObservation = property.subscribe { late.append($0) }
            throw Boom()
        })
        XCTAssertEqual(late.values, [5], "an observer added inside hears the current value at once")
        observation.dispose()
        lateObservation?.dispose()
    }

    /// Something a property holds, whose deinit runs `onFree`.
    final class Resource: @unchecked Sendable {
        let id: Int
        var onFree: (@Sendable () -> Void)?
        init(_ id: Int) { self.id = id }
        deinit { onFree?() }
    }

    /// A property holding resource 0, observed into `seen`; once freed, resource 0 notes
    /// the value the property holds and stores resource 7 into it.
    private func propertyUsedByItsFirstValueWhenFreed(_ seen: Recorder<String>) -> Property<Resource> {
        let property = Property(Resource(0))
        property.observe { seen.append("observer \($0.id)") }
        property.value.onFree = {
            seen.append("freed 0, reads \(property.value.id)")
            property.value = Resource(7)
        }
        return property
    }

    /// What a value that a transform replaces frees may use the property: it runs once
    /// the transform's result is stored and queued, so it reads that result, and a value
    /// it stores is delivered after it and stays. Freed in the middle of the store, it
    /// read the value being freed, and its own store freed that value a second time (a
    /// crash in an optimized build; in a debug build, its value was delivered first and
    /// then overtaken by the result the property no longer held).
    func testValueReplacedByATransformMayUseThePropertyWhenFreed() {
        let seen = Recorder<String>()
        let property = propertyUsedByItsFirstValueWhenFreed(seen)
        property.modify { $0 = Resource(1) }
        XCTAssertEqual(property.value.id, 7)
        XCTAssertEqual(seen.values, ["observer 0", "freed 0, reads 1", "observer 1", "observer 7"])
    }

    /// What a value replaced by a store from outside a transform (`value =`, `modify`)
    /// frees may use the property: it runs once the property's lock is given back,
    /// before the new value is delivered. Freed with the lock held, its read would wait
    /// for that lock forever.
    func testValueReplacedFromOutsideMayUseThePropertyWhenFreed() {
        let seen = Recorder<String>()
        let property = propertyUsedByItsFirstValueWhenFreed(seen)
        guard returnsInTime("the release of the replaced value did not return", holding: property, {
            property.value = Resource(1)
        }) else { return }
        XCTAssertEqual(property.value.id, 7)
        XCTAssertEqual(seen.values, ["observer 0", "freed 0, reads 1", "observer 1", "observer 7"])
    }

    /// Disposing an observation releases its observer once the subscription's lock is
    /// given back: an owner the observer captured, freed with it, may dispose what it
    /// holds, this very observation among them (a dispose bag ended in `deinit`), and
    /// use the loop. Released with the lock held, that second dispose would wait for the
    /// lock forever.
    func testAnObserverReleasedByItsDisposeMayDisposeItAgain() {
        final class Owner: @unchecked Sendable {
            var observations: [Loop<Counter, CounterEvent, CounterEffect>.Disposable] = []
            let freed: Recorder<String>
            init(_ freed: Recorder<String>) { self.freed = freed }
            deinit {
                for observation in observations { observation.dispose() }
                freed.append("owner freed")
            }
        }
        let loop = Loop(model: Counter(), update: counterUpdate)
        let freed = Recorder<String>()
        var owner: Owner? = Owner(freed)
        nonisolated(unsafe) let observation = loop.observe { [owner] model in _ = owner }
        owner?.observations.append(observation)
        owner = nil
        guard returnsInTime("the release of the disposed observer did not return", holding: loop, {
            observation.dispose()
        }) else { return }
        XCTAssertEqual(freed.values, ["owner freed"])
        XCTAssertTrue(loop.dispatch(.increment), "the loop goes on")
    }

    /// A value delivered is released once the broadcast's lock is given back: what it
    /// frees may use the signal. (Here the value an observer sent, delivered last, is
    /// held by nothing else once delivered; freed with the lock held, its send would
    /// wait for that lock forever.)
    func testADeliveredValueMayUseTheSignalWhenFreed() {
        let signal = Signal<FreeHook?>()
        let seen = Recorder<String>()
        nonisolated(unsafe) var sent = false
        signal.observe { token in
            seen.append(token == nil ? "nil" : "token")
            guard token == nil, !sent else { return }
            sent = true
            signal.send(FreeHook { signal.send(nil) })
        }
        guard returnsInTime("the release of a delivered value did not return", holding: signal, {
            signal.send(nil)
        }) else { return }
        XCTAssertEqual(seen.values, ["nil", "token", "nil"])
    }

    func testSignal() {
        let signal = Signal<String>()
        let seen = Recorder<String>()
        signal.send("before")
        let subscription = signal.observe { seen.append($0) }
        signal.send("a")
        subscription.dispose()
        signal.send("b")
        XCTAssertEqual(seen.values, ["a"])

        let tick = Signal<Void>()
        var ticks = 0
        tick.observe { ticks += 1 }
        tick.send()
        tick.send()
        XCTAssertEqual(ticks, 2)
    }

    func testSignalWithAnOwner() {
        let signal = Signal<Int>()
        let seen = Recorder<Int>()
        var owner: Owner? = Owner("o")
        signal.observe(with: owner!) { _, value in seen.append(value) }
        signal.send(1)
        owner = nil
        signal.send(2)
        XCTAssertEqual(seen.values, [1])
    }
}
