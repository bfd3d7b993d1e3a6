// One file although over 400 lines: the library's closure tree and every baseline and
// floor are read side by side, to check that each does the same work (`main.swift`
// checks that they run the same effects; the key-path tree is KeyPathRenderer.swift).
import Diffuser

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One way of rendering a screen: the library or a hand-written baseline.
protocol Renderer {
    mutating func render(_ screen: Screen)
}

/// The library: `intoAll(sections: map(section_i, intoAll(fields: map(field_j, into(sink)))))`.
struct LibraryRenderer: Renderer {
    let diffuser: Diffuser<Screen>

    init() {
        diffuser = Self.build()
    }

    static func build() -> Diffuser<Screen> {
        let sections: [Diffuser<Screen>] = (0..<Shape.sections).map { i in
            .map({ $0.sections[i] }, section())
        }
        return .intoAll(sections)
    }

    /// The diffuser of one section: one gated leaf per field.
    static func section() -> Diffuser<Section> {
        let text: (String) -> Void = { sink(stringHash($0)) }
        let number: (Int) -> Void = { sink(UInt64(bitPattern: Int64($0))) }
        let leaves: [Diffuser<Section>] = [
            .map({ $0.s0 }, .into(text)),
            .map({ $0.s1 }, .into(text)),
            .map({ $0.s2 }, .into(text)),
            .map({ $0.s3 }, .into(text)),
            .map({ $0.s4 }, .into(text)),
            .map({ $0.i0 }, .into(number)),
            .map({ $0.i1 }, .into(number)),
            .map({ $0.i2 }, .into(number)),
            .map({ $0.i3 }, .into(number)),
            .map({ $0.i4 }, .into(number)),
        ]
        return .intoAll(leaves)
    }

    mutating func render(_ screen: Screen) {
        diffuser.run(screen)
    }
}

/// `hand`: flat arrays of previous leaf values, every leaf compared with `!=` each run.
struct HandRenderer: Renderer {
    var strings: [String?]
    var ints: [Int?]

    init() {
        strings = Array(repeating: nil, count: Shape.sections * 5)
        ints = Array(repeating: nil, count: Shape.sections * 5)
    }

    mutating func render(_ screen: Screen) {
        for (i, section) in screen.sections.enumerated() {
            let base = i * 5
            @inline(__always) func string(_ k: Int, _ v: String) {
                if strings[base + k] != v { sink(stringHash(v)); strings[base + k] = v }
            }
            @inline(__always) func int(_ k: Int, _ v: Int) {
                if ints[base + k] != v { sink(UInt64(bitPattern: Int64(v))); ints[base + k] = v }
            }
            string(0, section.s0); string(1, section.s1); string(2, section.s2); string(3, section.s3); string(4, section.s4)
            int(0, section.i0); int(1, section.i1); int(2, section.i2); int(3, section.i3); int(4, section.i4)
        }
    }
}

/// `hand-tree`: the pruning the diffuser does, by hand: compare the screen, then each
/// section, then each leaf of a changed section.
struct HandTreeRenderer: Renderer {
    var screen: Screen?
    var sections: [Section?]

    init() {
        sections = Array(repeating: nil, count: Shape.sections)
    }

    mutating func render(_ new: Screen) {
        if let old = screen, old == new { return }
        for (i, section) in new.sections.enumerated() {
            guard let old = sections[i] else {
                for j in 0..<Shape.fields { sink(fieldHash(section, j)) }
                sections[i] = section
                continue
            }
            if old == section { continue }
            if old.s0 != section.s0 { sink(stringHash(section.s0)) }
            if old.s1 != section.s1 { sink(stringHash(section.s1)) }
            if old.s2 != section.s2 { sink(stringHash(section.s2)) }
            if old.s3 != section.s3 { sink(stringHash(section.s3)) }
            if old.s4 != section.s4 { sink(stringHash(section.s4)) }
            if old.i0 != section.i0 { sink(UInt64(bitPattern: Int64(section.i0))) }
            if old.i1 != section.i1 { sink(UInt64(bitPattern: Int64(section.i1))) }
            if old.i2 != section.i2 { sink(UInt64(bitPattern: Int64(section.i2))) }
            if old.i3 != section.i3 { sink(UInt64(bitPattern: Int64(section.i3))) }
            if old.i4 != section.i4 { sink(UInt64(bitPattern: Int64(section.i4))) }
            sections[i] = section
        }
        screen = new
    }
}

/// `floor` of the run scenarios: not a baseline to beat but the least work any library
/// taking this API's closures must do. It prunes as `hand-tree` does, but gets every part
/// from a closure of the kind `map` is given (`(Screen) -> Section`, `(Section) -> String`,
/// opaque to the optimizer), keeps a cache per leaf as a gate does and calls every effect
/// through a closure. Like a gate it keeps the new value after every run, equal or not
/// (unless the cache holds the very same bits), so that the next run compares with the last
/// value: the reference semantics; comparing with an older, identical value would be
/// cheaper and wrong. Like the library, it reads caches where they lie and calls closures
/// without retaining them. A part closure returns an owned copy, though: a section's copy
/// retains its strings, which `hand-tree`, reading in place, never does. A library can only
/// add to this, so where `floor` is above a target's multiple of `hand-tree`, no library
/// with this API meets that target.
/// Whether `value` has the bytes of the value at `kept` (as the library's gate checks
/// before it rewrites a cache).
@inline(__always)
func sameBits<T>(_ kept: UnsafePointer<T>, _ value: T) -> Bool {
    withUnsafeBytes(of: value) { memcmp(kept, $0.baseAddress!, MemoryLayout<T>.size) == 0 }
}

struct ClosureFloorRenderer: Renderer {
    /// A closure kept by a `let` of an object, so that a call through an unretained
    /// reference to the object does not retain the closure's context.
    final class Part<A, B> {
        let get: (A) -> B
        init(_ get: @escaping (A) -> B) { self.get = get }
    }

    /// Caches of one type, read and compared in place: `has[i]` says whether `values[i]`
    /// holds one.
    struct Caches<Value: Equatable> {
        let values: UnsafeMutablePointer<Value>
        let has: UnsafeMutablePointer<Bool>
        let count: Int

        init(_ count: Int) {
            values = .allocate(capacity: count)
            has = .allocate(capacity: count)
            has.initialize(repeating: false, count: count)
            self.count = count
        }

        /// Whether the cache at `i` holds a value equal to `value`, compared in place.
        @inline(__always)
        func holds(_ i: Int, _ value: Value) -> Bool {
            has[i] && values[i] == value
        }

        /// Keeps `value`, found equal to the cache at `i`, unless the cache holds the very
        /// same bits.
        @inline(__always)
        func keepEqual(_ i: Int, _ value: consuming Value) {
            if !sameBits(values + i, value) { values[i] = value }
        }

        /// Moves `value` into the cache at `i`.
        @inline(__always)
        func store(_ i: Int, _ value: consuming Value) {
            if has[i] {
                values[i] = value
            } else {
                (values + i).initialize(to: value)
                has[i] = true
            }
        }

        func free() {
            for i in 0..<count where has[i] { (values + i).deinitialize(count: 1) }
            values.deallocate()
            has.deallocate()
        }
    }

    /// The closures and caches, released with the renderer.
    final class Storage {
        let sectionParts: [Unmanaged<Part<Screen, Section>>]
        let stringParts: [Unmanaged<Part<Section, String>>]
        let intParts: [Unmanaged<Part<Section, Int>>]
        let text: Part<String, Void>
        let number: Part<Int, Void>
        let sections = Caches<Section>(Shape.sections)
        let strings = Caches<String>(Shape.sections * 5)
        let ints = Caches<Int>(Shape.sections * 5)

        init() {
            let (sections, strings, ints, text, number) = Storage.closures()
            sectionParts = sections.map { Unmanaged.passRetained(Part($0)) }
            stringParts = strings.map { Unmanaged.passRetained(Part($0)) }
            intParts = ints.map { Unmanaged.passRetained(Part($0)) }
            self.text = Part(text)
            self.number = Part(number)
        }

        deinit {
            sectionParts.forEach { $0.release() }
            stringParts.forEach { $0.release() }
            intParts.forEach { $0.release() }
            sections.free()
            strings.free()
            ints.free()
        }

        /// The closures of `LibraryRenderer.build()`, made where the renderer cannot see them.
        @inline(never)
        static func closures() -> ([(Screen) -> Section], [(Section) -> String], [(Section) -> Int],
                                   (String) -> Void, (Int) -> Void) {
            let sections: [(Screen) -> Section] = (0..<Shape.sections).map { i in { $0.sections[i] } }
            let strings: [(Section) -> String] = [{ $0.s0 }, { $0.s1 }, { $0.s2 }, { $0.s3 }, { $0.s4 }]
            let ints: [(Section) -> Int] = [{ $0.i0 }, { $0.i1 }, { $0.i2 }, { $0.i3 }, { $0.i4 }]
            return (sections, strings, ints, { sink(stringHash($0)) }, { sink(UInt64(bitPattern: Int64($0))) })
        }
    }

    let storage = Storage()
    var screen: Screen?

    mutating func render(_ new: Screen) {
        if let old = screen, old == new {
            if !withUnsafePointer(to: old, { sameBits($0, new) }) { screen = new }
            return
        }
        let s = storage
        s.sectionParts.withUnsafeBufferPointer { sectionParts in
            for i in 0..<sectionParts.count {
                let section = sectionParts[i]._withUnsafeGuaranteedRef { $0.get(new) }
                if s.sections.holds(i, section) {
                    s.sections.keepEqual(i, section)
                    continue
                }
                s.stringParts.withUnsafeBufferPointer { parts in
                    for k in 0..<5 {
                        let part = parts[k]._withUnsafeGuaranteedRef { $0.get(section) }
                        if s.strings.holds(i * 5 + k, part) {
                            s.strings.keepEqual(i * 5 + k, part)
                            continue
                        }
                        s.text.get(part)
                        s.strings.store(i * 5 + k, part)
                    }
                }
                s.intParts.withUnsafeBufferPointer { parts in
                    for k in 0..<5 {
                        let part = parts[k]._withUnsafeGuaranteedRef { $0.get(section) }
                        if s.ints.holds(i * 5 + k, part) {
                            s.ints.keepEqual(i * 5 + k, part)
                            continue
                        }
                        s.number.get(part)
                        s.ints.store(i * 5 + k, part)
                    }
                }
                s.sections.store(i, section)
            }
        }
        screen = new
    }
}

/// `node floor`: the least a library does that keeps one node per combinator, as this
/// one must (a `Diffuser` is a node, and a node used twice shares its cache). Each node is
/// one object holding what its combinator was given and, for a gate, its cache; a parent
/// reaches its child through a method the child overrides (a parent cannot know its
/// child's kind). It does the work of `ClosureFloorRenderer` in the same order, with the
/// same closures: a map hands its part to its child as owned, a gate compares in place and
/// moves an owned value into its cache. The gap between it and `ClosureFloorRenderer` is
/// the price of the tree's shape, which no library of composable nodes avoids.
///
/// Its classes are written for the benchmark's types (a method of a generic class runs
/// unspecialized, which would make this no floor); the gate's work is one generic struct
/// (`Cache`), inlined into each.
///
/// Its `build` is the floor of the library's `build`, and its size after a first run the
/// floor of the library's memory: one small object per combinator, nothing else.
struct NodeFloorRenderer: Renderer {
    /// A gate's cache and what a gate does with it, for any `Equatable` value.
    struct Cache<A: Equatable> {
        var value: A?
        var has = false

        /// Whether the cache holds a value equal to `new`, compared where it lies; if so,
        /// keeps `new` unless the cache holds its very bits.
        @inline(__always)
        mutating func keepsEqual(_ new: A) -> Bool {
            guard has else { return false }
            return withUnsafeMutablePointer(to: &value) { raw in
                let kept = UnsafeMutableRawPointer(raw).assumingMemoryBound(to: A.self)
                guard kept.pointee == new else { return false }
                if !sameBits(kept, new) { kept.pointee = new }
                return true
            }
        }

        /// Keeps `new`, which was not equal to the cache.
        @inline(__always)
        mutating func store(_ new: __owned A) {
            value = new
            has = true
        }

        /// What `into(effect)` does with a value handed over.
        @inline(__always)
        mutating func into(_ new: __owned A, _ effect: (A) -> Void) {
            if keepsEqual(new) { return }
            effect(new)
            store(new)
        }
    }

    class StringNode {
        func take(_ value: __owned String) {}
    }
    final class StringGate: StringNode {
        let effect: (String) -> Void
        @exclusivity(unchecked) var cache = Cache<String>()
        init(_ effect: @escaping (String) -> Void) { self.effect = effect }
        override func take(_ value: __owned String) { cache.into(value, effect) }
    }

    class IntNode {
        func take(_ value: __owned Int) {}
    }
    final class IntGate: IntNode {
        let effect: (Int) -> Void
        @exclusivity(unchecked) var cache = Cache<Int>()
        init(_ effect: @escaping (Int) -> Void) { self.effect = effect }
        override func take(_ value: __owned Int) { cache.into(value, effect) }
    }

    class SectionNode {
        func run(_ value: Section) {}
        func take(_ value: __owned Section) { run(value) }
    }
    final class StringMap: SectionNode {
        let transform: (Section) -> String
        let child: StringNode
        init(_ transform: @escaping (Section) -> String, _ child: StringNode) {
            self.transform = transform
            self.child = child
        }
        override func run(_ value: Section) { child.take(transform(value)) }
    }
    final class IntMap: SectionNode {
        let transform: (Section) -> Int
        let child: IntNode
        init(_ transform: @escaping (Section) -> Int, _ child: IntNode) {
            self.transform = transform
            self.child = child
        }
        override func run(_ value: Section) { child.take(transform(value)) }
    }
    final class SectionGate: SectionNode {
        let children: [Unmanaged<SectionNode>]
        @exclusivity(unchecked) var cache = Cache<Section>()
        init(_ children: [SectionNode]) { self.children = children.map { Unmanaged.passRetained($0) } }
        deinit { children.forEach { $0.release() } }
        override func take(_ value: __owned Section) {
            if cache.keepsEqual(value) { return }
            children.withUnsafeBufferPointer { children in
                for child in children { child._withUnsafeGuaranteedRef { $0.run(value) } }
            }
            cache.store(value)
        }
    }

    class ScreenNode {
        func run(_ value: Screen) {}
    }
    final class SectionMap: ScreenNode {
        let transform: (Screen) -> Section
        let child: SectionNode
        init(_ transform: @escaping (Screen) -> Section, _ child: SectionNode) {
            self.transform = transform
            self.child = child
        }
        override func run(_ value: Screen) { child.take(transform(value)) }
    }
    final class ScreenGate: ScreenNode {
        let children: [Unmanaged<ScreenNode>]
        @exclusivity(unchecked) var cache = Cache<Screen>()
        init(_ children: [ScreenNode]) { self.children = children.map { Unmanaged.passRetained($0) } }
        deinit { children.forEach { $0.release() } }
        override func run(_ value: Screen) {
            if cache.keepsEqual(value) { return }
            children.withUnsafeBufferPointer { children in
                for child in children { child._withUnsafeGuaranteedRef { $0.run(value) } }
            }
            cache.store(value)
        }
    }

    let root: ScreenNode

    init() {
        root = Self.build()
    }

    @inline(never)
    static func build() -> ScreenNode {
        let sections: [ScreenNode] = (0..<Shape.sections).map { i in
            SectionMap({ (screen: Screen) in screen.sections[i] }, section())
        }
        return ScreenGate(sections)
    }

    static func section() -> SectionNode {
        let text: (String) -> Void = { sink(stringHash($0)) }
        let number: (Int) -> Void = { sink(UInt64(bitPattern: Int64($0))) }
        let leaves: [SectionNode] = [
            StringMap({ $0.s0 }, StringGate(text)),
            StringMap({ $0.s1 }, StringGate(text)),
            StringMap({ $0.s2 }, StringGate(text)),
            StringMap({ $0.s3 }, StringGate(text)),
            StringMap({ $0.s4 }, StringGate(text)),
            IntMap({ $0.i0 }, IntGate(number)),
            IntMap({ $0.i1 }, IntGate(number)),
            IntMap({ $0.i2 }, IntGate(number)),
            IntMap({ $0.i3 }, IntGate(number)),
            IntMap({ $0.i4 }, IntGate(number)),
        ]
        return SectionGate(leaves)
    }

    mutating func render(_ screen: Screen) {
        root.run(screen)
    }
}
