import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import Diffuser

/// Threads: many dispatchers, dispose and stop racing dispatch, reentrancy across
/// threads and loops, nothing after dispose, nothing lost before it.
///
/// One file although over 400 lines: its tests run a loop's calls from many threads at
/// once (dispatch, stop and dispose, jobs, properties, signals, gears), several with the
/// tallying update and the racy counter that make a lost, reordered or concurrent step
/// visible.
final class LoopConcurrencyTests: XCTestCase {
    struct Tally: Equatable, Sendable {
        var total = 0
        var last = [Int](repeating: -1, count: 8)
        var outOfOrder = 0
    }

    struct Tick: Sendable {
        let thread: Int
        let sequence: Int
    }

    /// An update that also bumps a counter that is not thread-safe: two steps at once
    /// would lose bumps (and ThreadSanitizer would see the race).
    static func tallying(_ racy: RacyCounter) -> Update<Tally, Tick, Never> {
        .reducer { tally, tick in
            racy.increment()
            var next = tally
            next.total += 1
            if tick.sequence <= next.last[tick.thread] { next.outOfOrder += 1 }
            next.last[tick.thread] = tick.sequence
            return next
        }
    }

    private func eightThreadsDispatch(executor: LoopExecutor, perThread: Int) {
        let racy = RacyCounter()
        let published = Atomic<Int>(0)
        let loop = Loop(model: Tally(), update: Self.tallying(racy), executor: executor)
        loop.observe { _ in published.add(1, ordering: .relaxed) }
        onThreads(8) { thread in
            for sequence in 0..<perThread {
                XCTAssertTrue(loop.dispatch(Tick(thread: thread, sequence: sequence)))
            }
        }
        XCTAssertTrue(eventually(30) { loop.model.total == 8 * perThread })
        let tally = loop.model
        XCTAssertEqual(tally.outOfOrder, 0, "each thread's events in the order it sent them")
        XCTAssertEqual(racy.value, 8 * perThread, "no two steps at once")
        XCTAssertTrue(eventually { published.load(ordering: .relaxed) == 8 * perThread + 1 })
        loop.dispose()
    }

    /// Types that carry models and events across threads are `Sendable` when those are
    /// (a loop over non-`Sendable` values is not, which the compiler checks; see `Loop`).
    func testTypesOfSendableValuesAreSendable() {
        func shareable<T: Sendable>(_ value: T) -> T { value }
        let loop = shareable(Loop(model: Tally(), update: Self.tallying(RacyCounter())))
        _ = shareable(Output<Int>())
        _ = shareable(Gear<Int>())
        _ = shareable(Signal<Int>())
        _ = shareable(Property(0))
        _ = shareable(Journal<Int, Int>())
        let sent = Mutex<Int>(0)
        _ = loop.add(Feedback<Tally, Tick>.work { _, job in
            _ = shareable(job)
            sent.withLock { $0 += 1 }
            job.finish()
        })
        XCTAssertEqual(sent.withLock { $0 }, 1)
        loop.dispose()
    }

    func testEightThreadsDispatchingOnTheCallersExecutor() {
        eightThreadsDispatch(executor: CallerExecutor(), perThread: 2_000)
    }

    func testEightThreadsDispatchingOnABackgroundExecutor() {
        eightThreadsDispatch(executor: BackgroundExecutor(), perThread: 2_000)
    }

    /// Eight threads dispatch while another disposes. Every dispatch that returned true
    /// reached the update before dispose returned (nothing lost), and no callback of the
    /// loop (update, observer, handler, feedback, work on an executor) starts after it
    /// returned.
    func testDisposeRacingDispatch() {
        let background = BackgroundExecutor()
        for round in 0..<40 {
            disposeRace(round: round, loopExecutor: round % 4 == 3 ? background : CallerExecutor(), workExecutor: background)
        }
    }

    private func disposeRace(round: Int, loopExecutor: LoopExecutor, workExecutor: LoopExecutor) {
        final class Counters: @unchecked Sendable {
            let accepted = Atomic<Int>(0)
            let updated = Atomic<Int>(0)
            let violations = Atomic<Int>(0)
            let disposed = Atomic<Bool>(false)
            func check() {
                if disposed.load(ordering: .acquiring) { violations.add(1, ordering: .relaxed) }
            }
        }
        let counters = Counters()
        let update = Update<Int, Int, Int> { model, event in
            counters.check()
            counters.updated.add(1, ordering: .relaxed)
            return .next(model + 1, effects: event % 3 == 0 ? [event] : [])
        }
        let loop = Loop(
            model: 0,
            update: update,
            handlers: [EffectHandler { effect, job in
                counters.check()
                DispatchQueue.global().async {
                    // Later sends of cancelled work are refused; accepted ones count.
                    if job.send(-effect) { counters.accepted.add(1, ordering: .relaxed) }
                }
            }],
            feedbacks: [
                .work { model, job in
                    counters.check()
                    if model % 50 == 0 && job.send(-1) { counters.accepted.add(1, ordering: .relaxed) }
                    job.finish()
                },
                .work(on: workExecutor) { _, job in counters.check(); job.finish() },
            ],
            executor: loopExecutor,
            inspector: { _ in counters.check() }
        )
        loop.observe { _ in counters.check() }
        let start = DispatchSemaphore(value: 0)
        let external = Atomic<Int>(0)
        let disposer = Thread {
            start.wait()
            // The race needs dispatches accepted before the dispose: on a loaded machine
            // (under a sanitizer) the dispatching threads may not have started yet.
            while external.load(ordering: .relaxed) == 0 { sched_yield() }
            usleep(UInt32(50 + (round * 37) % 400))
            loop.dispose()
            counters.disposed.store(true, ordering: .releasing)
        }
        disposer.start()
        onThreads(8) { thread in
            if thread == 0 { start.signal() }
            var i = 0
            while loop.dispatch(thread * 1_000_000 + i) {
                external.add(1, ordering: .relaxed)
                i += 1
            }
        }
        XCTAssertTrue(eventually { counters.disposed.load(ordering: .acquiring) })
        // Give late work on other threads the chance to violate.
        usleep(2_000)
        XCTAssertEqual(counters.violations.load(ordering: .relaxed), 0, "round \(round): a callback after dispose returned")
        let updated = counters.updated.load(ordering: .relaxed)
        let accepted = external.load(ordering: .relaxed) + counters.accepted.load(ordering: .relaxed)
        XCTAssertEqual(updated, accepted, "round \(round): every accepted event, and only those, reached the update")
        XCTAssertGreaterThan(external.load(ordering: .relaxed), 0)
        XCTAssertFalse(loop.dispatch(0))
    }

    /// Stop and start race eight dispatching threads: steps never overlap, and every
    /// accepted event reaches the update.
    func testStopAndStartRacingDispatch() {
        let racy = RacyCounter()
        let loop = Loop(model: Tally(), update: Self.tallying(racy))
        let accepted = Atomic<Int>(0)
        let done = Atomic<Bool>(false)
        let toggler = Thread {
            while !done.load(ordering: .acquiring) {
                loop.stop()
                usleep(50)
                loop.start()
                usleep(50)
            }
        }
        toggler.start()
        let deadline = Date().addingTimeInterval(5)
        onThreads(8) { thread in
            var mine = 0
            var sequence = 0
            while mine < 250 && Date() < deadline {
                if loop.dispatch(Tick(thread: thread, sequence: sequence)) {
                    accepted.add(1, ordering: .relaxed)
                    mine += 1
                }
                sequence += 1
            }
        }
        done.store(true, ordering: .releasing)
        loop.stop()
        XCTAssertGreaterThan(accepted.load(ordering: .relaxed), 1_000)
        XCTAssertEqual(loop.model.total, accepted.load(ordering: .relaxed))
        XCTAssertEqual(racy.value, loop.model.total)
        XCTAssertEqual(loop.model.outOfOrder, 0)
        loop.dispose()
    }

    /// A handler may wait for another thread that dispatches into the same loop: the
    /// dispatch queues and returns, so the wait ends.
    func testHandlerWaitingForAThreadThatDispatchesDoesNotDeadlock() {
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, _ in }]
        )
        let finished = DispatchSemaphore(value: 0)
        let waiter = Loop(
            model: 0,
            update: Update<Int, Int, Int> { model, event in .next(model + event, effects: [event]) },
            handlers: [EffectHandler { effect, _ in
                guard effect == 1 else { return }
                let helper = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    XCTAssertTrue(loop.dispatch(.increment))
                    helper.signal()
                }
                helper.wait()
                finished.signal()
            }]
        )
        waiter.dispatch(1)
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(loop.model.count, 1)
        loop.dispose()
        waiter.dispose()
    }

    /// Two loops whose observers dispatch into each other, driven from two threads at
    /// once: no deadlock, nothing lost.
    func testTwoLoopsFeedingEachOtherFromTwoThreads() {
        var aRef: Loop<Int, Int, Never>?
        var bRef: Loop<Int, Int, Never>?
        let a = Loop<Int, Int, Never>(model: 0, reducer: { $0 + $1 }, autostart: false)
        let b = Loop<Int, Int, Never>(model: 0, reducer: { $0 + $1 }, autostart: false)
        aRef = a
        bRef = b
        let aLoop = a
        let bLoop = b
        a.observe { model in if model % 2 == 1 { bRef?.dispatch(1) } }
        b.observe { model in if model % 2 == 1 { aRef?.dispatch(1) } }
        a.start()
        b.start()
        onThreads(2) { thread in
            for _ in 0..<2_000 {
                if thread == 0 { aLoop.dispatch(2) } else { bLoop.dispatch(2) }
            }
        }
        XCTAssertTrue(eventually { a.model >= 4_000 && b.model >= 4_000 })
        a.dispose()
        b.dispose()
        aRef = nil
        bRef = nil
    }

    /// Observers subscribe and dispose on four threads while four others dispatch: once
    /// a subscription's dispose returned, its observer is not called.
    ///
    /// The dispatchers send a bounded number of events: dispatch never waits, so
    /// dispatchers faster than the drain would grow the queue without end.
    func testSubscriptionsRacingPublishing() {
        let loop = Loop(model: Counter(), update: counterUpdate)
        let violations = Atomic<Int>(0)
        let dispatchers = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: dispatchers) {
                for _ in 0..<5_000 { loop.dispatch(.increment) }
            }
        }
        onThreads(4) { _ in
            for _ in 0..<300 {
                final class Done: @unchecked Sendable { let flag = Atomic<Bool>(false) }
                let done = Done()
                let subscription = loop.observe { _ in
                    if done.flag.load(ordering: .acquiring) { violations.add(1, ordering: .relaxed) }
                }
                subscription.dispose()
                done.flag.store(true, ordering: .releasing)
            }
        }
        dispatchers.wait()
        XCTAssertEqual(loop.model.count, 20_000)
        XCTAssertEqual(violations.load(ordering: .relaxed), 0)
        loop.dispose()
    }

    /// A callback on another thread that disposes (or stops, or starts) the loop while
    /// another thread is disposing it does not wait for that dispose, which waits for the
    /// callback: both return, and the loop ends disposed.
    func testCallbackClosingWhileAnotherThreadCloses() {
        for target in ["dispose", "stop", "start"] {
            let background = BackgroundExecutor()
            let inCallback = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let returned = DispatchSemaphore(value: 0)
            final class Box: @unchecked Sendable { var loop: Loop<Counter, CounterEvent, CounterEffect>? }
            let box = Box()
            let loop = Loop(
                model: Counter(),
                update: counterUpdate,
                feedbacks: [.work(on: background) { _, _ in
                    inCallback.signal()
                    go.wait()
                    switch target {
                    case "dispose": box.loop?.dispose()
                    case "stop": box.loop?.stop()
                    default: _ = box.loop?.start()
                    }
                    returned.signal()
                }]
            )
            box.loop = loop
            inCallback.wait()
            let stopped = DispatchSemaphore(value: 0)
            let disposer = Thread {
                loop.stop()
                stopped.signal()
            }
            disposer.start()
            // Let the stop reach its wait for the callback, then let the callback close.
            usleep(20_000)
            go.signal()
            XCTAssertEqual(returned.wait(timeout: .now() + 10), .success, "\(target) from the callback returned")
            XCTAssertEqual(stopped.wait(timeout: .now() + 10), .success, "the other thread's stop returned")
            XCTAssertTrue(eventually(10) { !loop.isRunning })
            if target == "dispose" {
                XCTAssertTrue(eventually(10) { loop.isDisposed }, "the dispose asked for during the stop happened")
            }
            loop.dispose()
            box.loop = nil
        }
    }

    /// A job sending from eight threads while it is cancelled: after `cancel()`
    /// returned, no event of it reaches the update.
    func testJobSendsRacingCancel() {
        let executor = ManualExecutor()
        let updates = Recorder<Int>()
        let jobs = Recorder<Job<Int>>()
        let loop = Loop<Int, Int, Never>(
            model: 0,
            reducer: { model, event in updates.append(event); return model + 1 },
            feedbacks: [.work(overlap: .concurrent) { model, job in if model == 0 { jobs.append(job) } }],
            executor: executor
        )
        executor.runAll()
        let job = jobs.values[0]
        onThreads(8) { thread in
            for i in 0..<200 {
                if thread == 0 && i == 100 { job.cancel() }
                job.send(thread * 1_000 + i)
            }
        }
        XCTAssertFalse(job.send(-1))
        executor.runAll()
        XCTAssertEqual(updates.count, 0, "every event of the cancelled job was queued behind its cancel, and dropped")
        loop.dispose()
    }

    /// `onCancel` racing `finish()` on another thread: once both returned the job has
    /// finished, so its action never runs, not even when the run ends.
    func testOnCancelRacingFinish() {
        let jobs = Recorder<Job<CounterEvent>>()
        let loop = Loop(
            model: Counter(),
            update: counterUpdate,
            handlers: [EffectHandler { effect, job in if effect == .note("job") { jobs.append(job) } }]
        )
        let ran = Recorder<Int>()
        let rounds = 20_000
        for round in 0..<rounds {
            loop.dispatch(.effects([.note("job")]))
            let job = jobs.values[round]
            onThreads(2) { thread in
                if thread == 0 { job.onCancel { ran.append(round) } } else { job.finish() }
            }
            loop.stop() // ends the run: the actions of jobs still running go
            XCTAssertTrue(loop.start())
        }
        XCTAssertEqual(ran.values, [], "actions of finished jobs ran")
        loop.dispose()
    }

    /// Property, Signal and Gear on six threads at once: two modify the property (each
    /// transform reads it back), two send on the signal and push into a gear another loop
    /// is attached to, and, for as long as those run, two subscribe to the property, the
    /// signal and the gear and dispose again; an observer of the property sends on the
    /// signal from inside its receiver. Each observer hears the values one at a time (its
    /// state is unguarded: ThreadSanitizer, in scripts/tsan.sh, sees two calls at once),
    /// each once and in the order stored or sent, and nothing after its dispose returned;
    /// no change or event is lost.
    func testPropertySignalAndGearFromManyThreads() {
        let changes = 10_000, sends = 10_000
        final class Ledger: @unchecked Sendable {
            let violations = Atomic<Int>(0)
            /// The threads still modifying or sending.
            let producing = Atomic<Int>(4)
            func violated(_ condition: Bool) {
                if condition { violations.add(1, ordering: .relaxed) }
            }
        }
        /// What one observer saw last, for it alone: not guarded, as its calls never overlap.
        final class Last: @unchecked Sendable {
            var value = -1
            var sequences = [-1, -1, -1]
        }
        let ledger = Ledger()
        let property = Property(0)
        let signal = Signal<Tick>()
        let gear = Gear<Int>()
        let attached = Loop(model: Counter(), update: counterUpdate, feedbacks: [.attached(to: gear) { .add($0) }])
        let heard = Last()
        let heardCount = Atomic<Int>(0)
        let stayingSignal = signal.observe { tick in
            ledger.violated(tick.sequence <= heard.sequences[tick.thread])
            heard.sequences[tick.thread] = tick.sequence
            heardCount.add(1, ordering: .relaxed)
        }
        let values = Recorder<Int>()
        let stayingProperty = property.observe { value in
            values.append(value)
            ledger.violated(property.value < value)               // the last stored is never older
            signal.send(Tick(thread: 2, sequence: value))         // queued, in order
        }
        onOwnThreads(6) { thread in
            switch thread {
            case 0, 1:
                for _ in 0..<changes {
                    property.modify { value in
                        ledger.violated(property.value != value)
                        value += 1
                    }
                }
                ledger.producing.subtract(1, ordering: .releasing)
            case 2, 3:
                for sequence in 0..<sends {
                    signal.send(Tick(thread: thread - 2, sequence: sequence))
                    gear.send(1)
                }
                ledger.producing.subtract(1, ordering: .releasing)
            default:
                while ledger.producing.load(ordering: .acquiring) > 0 {
                    let last = Last()
                    let disposed = Atomic<Bool>(false)
                    let calls = Atomic<Int>(0)
                    let observations = [
                        property.observe { value in
                            ledger.violated(disposed.load(ordering: .acquiring))
                            ledger.violated(last.value >= 0 && value != last.value + 1)
                            last.value = value
                            calls.add(1, ordering: .relaxed)
                        },
                        signal.observe { tick in
                            ledger.violated(disposed.load(ordering: .acquiring))
                            ledger.violated(tick.sequence <= last.sequences[tick.thread])
                            last.sequences[tick.thread] = tick.sequence
                            calls.add(1, ordering: .relaxed)
                        },
                        gear.observe { _ in ledger.violated(disposed.load(ordering: .acquiring)) },
                    ]
                    // Disposed while values arrive: once a few have, or the producers are done.
                    while calls.load(ordering: .relaxed) < 8 && ledger.producing.load(ordering: .acquiring) > 0 {
                        sched_yield()
                    }
                    for observation in observations { observation.dispose() }
                    disposed.store(true, ordering: .releasing)
                }
            }
        }
        XCTAssertEqual(ledger.violations.load(ordering: .relaxed), 0)
        XCTAssertEqual(property.value, 2 * changes)
        XCTAssertEqual(values.values, Array(0...2 * changes), "every value, once, in order")
        XCTAssertEqual(heardCount.load(ordering: .relaxed), 2 * sends + 2 * changes + 1, "every event sent")
        XCTAssertEqual(attached.model.count, 2 * sends, "every gear event reached the attached loop")
        stayingSignal.dispose()
        stayingProperty.dispose()
        attached.dispose()
    }
}
