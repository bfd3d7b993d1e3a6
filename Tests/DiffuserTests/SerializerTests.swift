import XCTest
@_spi(Bindings) @testable import Diffuser

/// How a graph's first run finds its serializer (`Serializer.frontier(of:)`): once per
/// node, also when nodes are shared, and leaving no mark behind.
final class SerializerTests: XCTestCase {
    /// `d = intoAll(d, d)`, `levels` times over one leaf: a graph of `levels` fan-outs
    /// with 2^levels paths to its leaf.
    private func doubled(levels: Int, _ leaf: Diffuser<Int>) -> Diffuser<Int> {
        var d = leaf
        for _ in 0..<levels { d = .intoAll(d, d) }
        return d
    }

    /// The nodes the frontier walk enters from `d`'s root, marks cleared afterwards.
    private func nodesWalked(_ d: Diffuser<Int>) -> Int {
        Serializer.graphLock.lock()
        defer { Serializer.graphLock.unlock() }
        let frontier = Serializer.frontier(of: d.node)
        d.node.clearWalked()
        return frontier.nodesWalked
    }

    func testTheWalkEntersEachSharedNodeOnce() {
        let leaf = Diffuser<Int>.into { _ in }
        let one = nodesWalked(doubled(levels: 1, leaf))
        let two = nodesWalked(doubled(levels: 2, leaf))
        let perLevel = two - one
        XCTAssertGreaterThan(perLevel, 0)
        // Per path, 20 levels would be about a million entries.
        XCTAssertEqual(nodesWalked(doubled(levels: 20, leaf)), one + 19 * perLevel)
    }

    func testAWalkLeavesNoMark() {
        let leaf = Diffuser<Int>.into { _ in }
        let d = doubled(levels: 3, leaf)
        _ = nodesWalked(d)
        XCTAssertNil(d.node.loadSerializer())
        XCTAssertEqual(d.node.serializerAddress.load(ordering: .relaxed), 0)
        XCTAssertEqual(nodesWalked(d), nodesWalked(d), "a second walk enters as many nodes")
    }

    /// A first run over 64 levels of sharing: 2^64 paths, but each node runs its gate
    /// once, and the leaf's effect runs once per new value.
    func testTheFirstRunOfADeeplySharedGraphRunsEachNodeOnce() {
        let log = Recorder<Int>()
        let d = doubled(levels: 64, .into { log.append($0) })
        d.run(1)
        d.run(1)
        d.run(2)
        XCTAssertEqual(log.values, [1, 2])
        XCTAssertNotNil(d.node.loadSerializer())
    }

    /// The merge path: a shared graph over two leaves that already run in graphs of
    /// their own. The walk's marks are cleared before the merge, and the walk after it
    /// gives every node one serializer.
    func testASharedGraphOverGraphsThatRanMergesThem() {
        let log = Recorder<String>()
        let a = Diffuser<Int>.into { log.append("a\($0)") }
        let b = Diffuser<Int>.into { log.append("b\($0)") }
        a.run(0)
        b.run(0)
        var d = Diffuser<Int>.intoAll(a, b)
        for _ in 0..<30 { d = .intoAll(d, .map({ $0 }, d)) }
        d.run(1)
        d.run(2)
        XCTAssertEqual(log.values, ["a0", "b0", "a1", "b1", "a2", "b2"])
        let top = d.node.loadSerializer()?.current
        XCTAssertNotNil(top)
        XCTAssertTrue(a.node.loadSerializer()?.current === top)
        XCTAssertTrue(b.node.loadSerializer()?.current === top)
    }
}
