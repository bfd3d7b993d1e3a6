import Diffuser

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
