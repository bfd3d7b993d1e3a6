import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// A loop's source connection (`Loop.connect`) disposed while the loop's turn is still
/// connecting its sources: on another thread, and from inside the connect itself. Once
/// the dispose has returned, no event of the sources is accepted, and the sources are
/// disconnected, once, as soon as they have connected.
final class LoopConnectionDisposeTests: XCTestCase {
    typealias CounterLoop = Loop<Counter, CounterEvent, CounterEffect>

    /// A source whose connect keeps its sink, tells `connecting`, then waits for
    /// `goOn`; it counts its disconnects and the threads they ran on.
    final class SlowSource: @unchecked Sendable {
        let connecting = DispatchSemaphore(value: 0)
        let goOn = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var sink: ((Int) throws -> Void)?
        private var disconnectThreads: [UInt] = []
        /// Runs inside the connect, before it waits (or instead, if it returns true).
        var duringConnect: (((Int) throws -> Void) -> Bool)?

        var fuser: Fuser<CounterEvent> {
            Fuser<CounterEvent>.extract({ (n: Int) in CounterEvent.add(n) }, Fuser(tryConnector: { sink in
                self.lock.lock()
                self.sink = sink
                self.lock.unlock()
                let skipWait = self.duringConnect?(sink) ?? false
                if !skipWait {
                    self.connecting.signal()
                    self.goOn.wait()
                }
                return AnonymousDisposable {
                    self.lock.lock()
                    self.disconnectThreads.append(UInt(bitPattern: Int(bitPattern: pthread_self())))
                    self.lock.unlock()
                }
            }))
        }

        /// Emits `value` through the sink of the last connect; whether a sink was there.
        @discardableResult
        func send(_ value: Int) throws -> Bool {
            lock.lock()
            let sink = self.sink
            lock.unlock()
            guard let sink else { return false }
            try sink(value)
            return true
        }

        var disconnects: [UInt] {
            lock.lock()
            defer { lock.unlock() }
            return disconnectThreads
        }
    }

    private func backgroundLoop() -> CounterLoop {
        CounterLoop(model: Counter(), update: counterUpdate, executor: BackgroundExecutor())
    }

    /// The loop's turn (on its executor's thread) is inside the source's connect when
    /// the test's thread disposes the connection: the dispose returns without waiting
    /// for the connect, an event the source emits after it is dropped, and the source
    /// is disconnected once, on the connecting thread, when its connect returns.
    func testADisposeWhileTheSourceConnectsOnAnotherThreadDropsLaterEvents() throws {
        let loop = backgroundLoop()
        let source = SlowSource()
        let connection = loop.connect(source.fuser)
        XCTAssertEqual(source.connecting.wait(timeout: .now() + 5), .success)

        // An event emitted while the connect is in progress, before the dispose, is
        // accepted (it is handled once the turn is free).
        XCTAssertTrue(try source.send(1))

        let disposed = DispatchSemaphore(value: 0), shared = LockedBox<_Disposable?>(connection)
        Thread.detachNewThread {
            shared.value?.dispose()
            disposed.signal()
        }
        XCTAssertEqual(disposed.wait(timeout: .now() + 5), .success, "the dispose waited for the source's connect")
        XCTAssertEqual(source.disconnects.count, 0, "disconnected before its connect returned")

        XCTAssertTrue(try source.send(10))
        source.goOn.signal()
        XCTAssertTrue(eventually { source.disconnects.count == 1 })
        XCTAssertTrue(try source.send(100))
        loop.stop() // waits for the events accepted so far to be handled
        XCTAssertEqual(loop.model.count, 1, "an event emitted after the dispose returned was handled")
        XCTAssertEqual(source.disconnects.count, 1)
        XCTAssertNotEqual(source.disconnects.first, UInt(bitPattern: Int(bitPattern: pthread_self())))
        loop.dispose()
    }

    /// The same dispose, while the loop's turn runs on a thread of the test's own
    /// (a caller's executor, the turn running a dispatch whose update blocks).
    func testADisposeWhileTheSourceConnectsOnACallersTurnDropsLaterEvents() {
        let inStep = DispatchSemaphore(value: 0), endStep = DispatchSemaphore(value: 0)
        let loop = CounterLoop(model: Counter(), update: Update { model, event in
            if event == .silent {
                inStep.signal()
                endStep.wait()
            }
            return try counterUpdate(model, event)
        })
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loop.dispatch(.silent)
            drained.signal()
        }
        XCTAssertEqual(inStep.wait(timeout: .now() + 5), .success)
        let source = SlowSource()
        let connection = loop.connect(source.fuser) // queued behind the step
        endStep.signal()
        XCTAssertEqual(source.connecting.wait(timeout: .now() + 5), .success)
        connection.dispose()
        XCTAssertEqual(source.disconnects.count, 0)
        XCTAssertTrue(try source.send(10))
        source.goOn.signal()
        XCTAssertEqual(drained.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(source.disconnects.count, 1)
        XCTAssertEqual(loop.model.count, 0)
        loop.dispose()
        XCTAssertEqual(source.disconnects.count, 1)
    }

    /// A source whose connect disposes its own registration (from inside the loop's
    /// turn): what it emits after that is dropped, it is disconnected once its connect
    /// returns, and a restart does not connect it again.
    func testASourceDisposingItsRegistrationFromItsConnect() {
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let source = SlowSource()
        let registration = LockedBox<_Disposable?>(nil)
        source.duringConnect = { sink in
            try? sink(1)
            registration.value?.dispose()
            try? sink(10)
            return true
        }
        loop.stop()
        registration.value = loop.connect(source.fuser)
        loop.start()
        XCTAssertEqual(loop.model.count, 1)
        XCTAssertEqual(source.disconnects, [UInt(bitPattern: Int(bitPattern: pthread_self()))])
        XCTAssertTrue(try source.send(100))
        loop.stop()
        loop.start()
        XCTAssertEqual(loop.model.count, 1)
        XCTAssertEqual(source.disconnects.count, 1)
        loop.dispose()
    }

    /// A dispose on another thread while a source of a fuser connects, whose next
    /// source then refuses: the refusal is reported as usual, the first source is
    /// disconnected once, and nothing is left connected.
    func testADisposeWhileConnectingThenARefusal() throws {
        let log = TraceLog()
        let loop = CounterLoop(
            model: Counter(), update: counterUpdate,
            executor: BackgroundExecutor(), inspector: log.inspector)
        let source = SlowSource()
        struct Refusal: Error {}
        let refusing = Fuser<CounterEvent>(tryConnector: { _ in throw Refusal() })
        let connection = loop.connect(Fuser.fromAll(source.fuser, refusing))
        XCTAssertEqual(source.connecting.wait(timeout: .now() + 5), .success)
        connection.dispose()
        source.goOn.signal()
        XCTAssertTrue(eventually { source.disconnects.count == 1 })
        loop.stop()
        XCTAssertTrue(log.lines.values.contains { $0.hasPrefix("sourceFailed") }, "\(log.lines.values)")
        XCTAssertEqual(try source.send(10), true)
        XCTAssertEqual(loop.model.count, 0)
        XCTAssertEqual(source.disconnects.count, 1)
        loop.dispose()
    }
    /// A source's connect hands its sink to thread E and returns once E's transform has
    /// disposed the registration (from inside E's delivery) and is stopping the loop,
    /// which waits for the turn inside the connect: the turn does not wait for E's
    /// delivery, and E disconnects the source once that delivery is over.
    func testADeliveryThatDisposesAndWaitsForTheConnectingTurn() {
        let loop = CounterLoop(model: Counter(), update: counterUpdate)
        let registration = LockedBox<_Disposable?>(nil)
        let disposed = DispatchSemaphore(value: 0), emitterDone = DispatchSemaphore(value: 0)
        let disconnects = Recorder<UInt>()
        let loopBox = LockedBox<CounterLoop?>(loop)
        let source = Fuser<Int>(tryConnector: { sink in
            let handed = LockedBox<((Int) throws -> Void)?>(sink)
            Thread.detachNewThread {
                try? handed.value?(1)
                try? handed.value?(2)
                emitterDone.signal()
            }
            disposed.wait()
            return AnonymousDisposable {
                disconnects.append(UInt(bitPattern: Int(bitPattern: pthread_self())))
            }
        })
        let fuser = Fuser<CounterEvent>.extract({ (n: Int) -> CounterEvent in
            if n == 2 {
                registration.value?.dispose()
                disposed.signal()
                loopBox.value?.stop()
            }
            return .add(n)
        }, source)
        loop.stop()
        registration.value = loop.connect(fuser)
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loop.start()
            started.signal()
        }
        XCTAssertEqual(started.wait(timeout: .now() + 20), .success, "the start never returned")
        XCTAssertEqual(emitterDone.wait(timeout: .now() + 20), .success, "the emitter never returned")
        XCTAssertEqual(loop.model.count, 1)
        XCTAssertTrue(eventually { disconnects.count == 1 })
        XCTAssertNotEqual(disconnects.values.first, UInt(bitPattern: Int(bitPattern: pthread_self())))
        loop.start()
        XCTAssertEqual(disconnects.count, 1, "connected again")
        loopBox.value = nil
        loop.dispose()
    }
    /// A source's transform stops the loop (which disposes its connection from inside
    /// the delivery, then waits for the run's callbacks), and an effect handler on a
    /// background executor, a callback of that run, then disposes the registration: that
    /// dispose returns at once (the connection has let go of its effect), rather than
    /// waiting for the rest of the delivery, which waits for the handler.
    func testAHandlersDisposeAfterATransformStoppedTheLoopDoesNotWaitForThatDelivery() {
        let registration = LockedBox<_Disposable?>(nil)
        let loopBox = LockedBox<CounterLoop?>(nil)
        let handlerIn = DispatchSemaphore(value: 0), handlerDone = DispatchSemaphore(value: 0)
        let emitterDone = DispatchSemaphore(value: 0)
        let handler = EffectHandler<CounterEffect, CounterEvent>(on: BackgroundExecutor()) { effect, _ in
            guard effect == .note("go") else { return }
            handlerIn.signal()
            while loopBox.value?.isRunning == true { usleep(1_000) }
            registration.value?.dispose()
            handlerDone.signal()
        }
        let loop = CounterLoop(model: Counter(), update: counterUpdate, handlers: [handler])
        loopBox.value = loop
        let output = Output<CounterEvent>()
        registration.value = loop.connect(Fuser.extract({ (event: CounterEvent) -> CounterEvent in
            loopBox.value?.stop()
            return event
        }, output.fuser))
        loop.dispatch(.effects([.note("go")]))
        XCTAssertEqual(handlerIn.wait(timeout: .now() + 10), .success)
        Thread.detachNewThread {
            output.send(.increment)
            emitterDone.signal()
        }
        XCTAssertEqual(handlerDone.wait(timeout: .now() + 20), .success, "the handler's dispose never returned")
        XCTAssertEqual(emitterDone.wait(timeout: .now() + 20), .success, "the transform's stop never returned")
        XCTAssertEqual(loop.model.count, 0)
        loopBox.value = nil
        loop.dispose()
    }
}

/// A value shared with a closure that runs later.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
