import Dispatch
import XCTest
@testable import Diffuser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A closure's map lends the closure its input where it lies (`callInPlace`), a key
/// path's map lends the key-path runtime a bitwise copy (`SelectsOwned.select(at:)`). The
/// closure must still see the value it would have been passed, of any type (one holding a
/// weak reference may not be moved in memory), every reference inside it must be freed
/// exactly once, the memory lent must only be read, and throws must surface as before.
final class InPlaceTests: XCTestCase {
    final class Object {
        let name: String
        init(_ name: String) { self.name = name }
    }

    /// Not bitwise takable: a weak reference's memory is registered with the runtime, so
    /// such a value may only be copied through its value witnesses, never moved by its bits.
    struct Watched {
        weak var object: Object?
        var label: String
        var count: Int
    }

    func testAValueHoldingAWeakReferenceIsLentToTheClosures() {
        XCTAssertFalse(_isBitwiseTakable(Watched.self), "the test needs a value that may not move")
        let seen = Recorder<String>()
        weak var gone: Object?
        do {
            let object = Object("first")
            gone = object
            let d = Diffuser<Watched>.intoAlways([
                .map({ $0.object?.name ?? "none" }, .into { seen.append("object=\($0)") }),
                .map({ $0.label }, .into { seen.append("label=\($0)") }),
                .map(throwing: { (w: Watched) throws -> Int in w.count }, .into { seen.append("count=\($0)") }),
            ])
            d.run(Watched(object: object, label: "a", count: 1))
            d.run(Watched(object: object, label: "b", count: 1))
            d.run(Watched(object: nil, label: "b", count: 2))
        }
        XCTAssertEqual(seen.values, [
            "object=first", "label=a", "count=1",
            "label=b",
            "object=none", "count=2",
        ])
        XCTAssertNil(gone, "nothing kept the object past the tree")
    }

    /// A screen of sections, each larger than a few words, as the benchmark's: every part
    /// is read from the value where it lies, and every object the parts share with the
    /// input is freed with the tree (none retained once too often; one released once too
    /// often crashes).
    func testPartsOfALargeValueAreReadWhereTheyLie() {
        struct Section: Equatable {
            var title: String
            var rows: [String]
            var flags: (Int, Int, Int, Int)
            var owner: Object
            static func == (a: Section, b: Section) -> Bool {
                a.title == b.title && a.rows == b.rows && a.flags == b.flags && a.owner === b.owner
            }
        }
        let seen = Recorder<String>()
        weak var gone: Object?
        do {
            let section = { (i: Int) in
                Diffuser<[Section]>.map({ $0[i] }, .intoAll(
                    .map({ $0.title }, .into { seen.append("\(i).title=\($0)") }),
                    .map({ $0.rows.joined(separator: ",") }, .into { seen.append("\(i).rows=\($0)") }),
                    .map({ $0.flags.2 }, .into { seen.append("\(i).flags=\($0)") }),
                    .map(throwing: { $0.owner }, .intoAlways { _ in })))
            }
            let d = Diffuser<[Section]>(section(0), section(1))
            let owner = Object("owner")
            gone = owner
            var screen = [
                Section(title: String(repeating: "t", count: 40), rows: ["r1", "r2"], flags: (1, 2, 3, 4), owner: owner),
                Section(title: "short", rows: [], flags: (5, 6, 7, 8), owner: owner),
            ]
            d.run(screen)
            screen[1].flags.2 = 70
            d.run(screen)
            screen[0].title = "changed"
            d.run(screen)
        }
        XCTAssertNil(gone, "every reference the runs took was released")
        XCTAssertEqual(seen.values, [
            "0.title=\(String(repeating: "t", count: 40))", "0.rows=r1,r2", "0.flags=3",
            "1.title=short", "1.rows=", "1.flags=7",
            "1.flags=70",
            "0.title=changed",
        ])
    }

    /// A value in memory that is never written (a global constant) is lent as well.
    func testAConstantIsLent() {
        let seen = Recorder<Int>()
        let d = Diffuser<Constants>.map({ $0.values.2 }, .into { seen.append($0) })
        d.run(Constants.shared)
        d.run(Constants.shared)
        XCTAssertEqual(seen.values, [3])
    }

    struct Labeled: Equatable {
        var label: String
        var count: Int
    }

    /// Lending only reads: steps handed the address of a value in a read-only page (as a
    /// map's part is handed to the maps below it) do not fault.
    func testLendingOnlyReads() throws {
        let size = Int(getpagesize())
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let page = mapped, page != MAP_FAILED else { return XCTFail("no page") }
        defer { munmap(page, size) }
        let value = page.bindMemory(to: Labeled.self, capacity: 1)
        value.initialize(to: Labeled(label: String(repeating: "l", count: 40), count: 5))
        XCTAssertEqual(mprotect(page, size, PROT_READ), 0)
        let seen = Recorder<String>()
        let d = Diffuser<Labeled>.intoAlways([
            .map({ $0.label }, .intoAlways { seen.append($0) }),
            .map(throwing: { $0.count }, .intoAlways { seen.append("\($0)") }),
            .map(\.count, .intoAlways { seen.append("field \($0)") }),
        ])
        try d.node.run(at: value)
        try d.node.run(at: value)
        XCTAssertEqual(mprotect(page, size, PROT_READ | PROT_WRITE), 0)
        value.deinitialize(count: 1)
        let label = String(repeating: "l", count: 40)
        XCTAssertEqual(seen.values, [label, "5", "field 5", label, "5", "field 5"])
    }

    /// Two graphs run on two threads over one constant. A run lends its maps a copy of
    /// its input (`Node.run(_:)`), so the two runs never access the same memory: a map's
    /// closure reaches its input through an exclusive access (`callInPlace`), which
    /// ThreadSanitizer reports when two of them overlap (`scripts/tsan.sh` runs this test).
    func testTwoThreadsRunTwoGraphsOverOneConstant() {
        let sums = [Recorder<Int>(), Recorder<Int>()]
        let diffusers = sums.map { sum in
            Diffuser<Constants>.map({ $0.values.2 + $0.values.5 }, .intoAlways { sum.append($0) })
        }
        nonisolated(unsafe) let shared = diffusers
        DispatchQueue.concurrentPerform(iterations: 2) { t in
            for _ in 0..<2_000 { shared[t].run(Constants.shared) }
        }
        XCTAssertEqual(sums.map(\.values), [Array(repeating: 9, count: 2_000), Array(repeating: 9, count: 2_000)])
    }

    struct Constants {
        let values: (Int, Int, Int, Int, Int, Int)
        static let shared = Constants(values: (1, 2, 3, 4, 5, 6))
    }

    /// A throw from a closure lent its input aborts the run there, and the next run is
    /// compared with the value kept before it.
    func testAThrowingClosureLentItsInputStillAbortsTheRun() {
        struct Refused: Error {}
        let seen = Recorder<Int>()
        let d = Diffuser<[Int]>.map(throwing: { (v: [Int]) throws -> Int in
            if v.contains(0) { throw Refused() }
            return v.reduce(0, +)
        }, .into { seen.append($0) })
        XCTAssertNoThrow(try d.tryRun([1, 2]))
        XCTAssertThrowsError(try d.tryRun([0, 3])) { XCTAssertTrue($0 is Refused) }
        XCTAssertNoThrow(try d.tryRun([3]))
        XCTAssertNoThrow(try d.tryRun([4]))
        XCTAssertEqual(seen.values, [3, 4], "3 equals the kept 3; 4 differs")
    }
}
