import Dispatch
import Foundation
import XCTest
@testable import Diffuser

/// `Output`: its effects run without its lock held, so that an effect may connect to,
/// disconnect from and send into its own output, and another thread may do so while an
/// effect runs. A send reaches the effects connected when it began.
final class OutputReentrancyTests: XCTestCase {
    /// An effect connects a new effect, sends (nested), disconnects itself and sends
    /// again: each send reaches the effects connected when it began.
    func testAnEffectConnectsSendsAndDisconnectsOnItsOwnOutput() {
        let output = Output<Int>()
        let seen = Recorder<String>()
        nonisolated(unsafe) var late: _Disposable?
        nonisolated(unsafe) var first: _Disposable?
        first = output.fuser.connect { n in
            seen.append("first \(n)")
            guard n == 1 else { return }
            late = output.fuser.connect { m in seen.append("late \(m)") }
            output.send(2)
            first?.dispose()
            output.send(3)
        }
        output.send(1)
        output.send(4)
        XCTAssertEqual(seen.values, ["first 1", "first 2", "late 2", "late 3", "late 4"])
        late?.dispose()
        output.send(5)
        XCTAssertEqual(seen.count, 5)
    }

    /// While an effect runs (waiting for another thread), that thread connects to the
    /// same output and disconnects again: neither waits for the effect. (A send would:
    /// it reaches the effect's connection, whose delivery holds its lock.)
    func testAnotherThreadUsesTheOutputWhileAnEffectRuns() {
        let output = Output<Int>()
        let seen = Recorder<String>()
        let kept = Recorder<_Disposable>()
        let connection = output.fuser.connect { n in
            seen.append("waiting \(n)")
            guard n == 1 else { return }
            let other = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let extra = output.fuser.connect { m in seen.append("extra \(m)") }
                kept.append(output.fuser.connect { m in seen.append("kept \(m)") })
                extra.dispose()
                other.signal()
            }
            XCTAssertEqual(other.wait(timeout: .now() + 5), .success,
                           "the other thread waited for the output's lock while an effect ran")
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            output.send(1)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        output.send(2)
        XCTAssertEqual(seen.values, ["waiting 1", "waiting 2", "kept 2"])
        connection.dispose()
        for made in kept.values { made.dispose() }
    }
    /// A disconnect releases what the connection's sink held (here the fuser's
    /// transform, once the fuser itself is gone) outside the output's lock: what that
    /// frees may send into the output.
    func testADisconnectReleasesTheSinkOutsideTheOutputsLock() {
        let output = Output<Int>()
        let seen = Recorder<Int>()
        let other = output.fuser.connect { seen.append($0) }
        nonisolated(unsafe) var connection: _Disposable?
        do {
            let token = FreeHook { output.send(7) }
            connection = Fuser<Int>.extract({ (n: Int) in withExtendedLifetime(token) { n } }, output.fuser).connect { _ in }
        }
        guard returnsInTime("a sink freed under the output's lock", holding: output, { connection?.dispose() }) else {
            return
        }
        XCTAssertEqual(seen.values, [7])
        other.dispose()
    }
}
