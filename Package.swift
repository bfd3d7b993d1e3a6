// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Diffuser",
    // Synchronization's atomics set the floor: macOS 15, iOS 18 and their siblings; Linux.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Diffuser", targets: ["Diffuser"]),
        // The C ABI as a shared library (CMake builds the installable libdiffuser.so).
        .library(name: "diffuser", type: .dynamic, targets: ["DiffuserC"]),
    ],
    targets: [
        // The single implementation of Diffuser and Fuser semantics. No Foundation.
        .target(
            name: "Diffuser",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // libffi closures and the C types of include/diffuser.h.
        .target(
            name: "CDiffuserFFI",
            linkerSettings: [.linkedLibrary("ffi")]
        ),
        // The C ABI: @_cdecl exports over the core, declared in include/diffuser.h.
        .target(
            name: "DiffuserC",
            dependencies: ["Diffuser", "CDiffuserFFI"],
            // The linker version script of the CMake build (the exported dfs_ symbols).
            exclude: ["exports.map"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "DiffuserTests",
            // DiffuserC for the C ABI's own bookkeeping (HandleTableTests), below what the
            // C tests reach.
            dependencies: ["Diffuser", "DiffuserC", "PackedFixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // C types the tests need and Swift cannot declare (a packed struct).
        .target(
            name: "PackedFixtures",
            path: "Tests/PackedFixtures"
        ),
        // The login demo (README): run with `swift run LoginDemo`.
        .executableTarget(
            name: "LoginDemo",
            dependencies: ["Diffuser"],
            path: "examples/swift/LoginDemo",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Prints ns per run against hand-written caching code. Not a test.
        // The heap in use, for the benchmark's bytes per leaf. Not part of Diffuser.
        .target(
            name: "BenchHeap",
            path: "bench/heap"
        ),
        .executableTarget(
            name: "DiffuserBench",
            dependencies: ["Diffuser", "BenchHeap"],
            path: "bench/swift",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // intoList's diff against CollectionDifference and a hand-written hash-map diff:
        // `swift run -c release ListDiffBench`. Not a test.
        .executableTarget(
            name: "ListDiffBench",
            dependencies: ["Diffuser"],
            path: "bench/swift-list",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Events per second through a Loop against a hand-written queue + reducer + render:
        // `swift run -c release LoopBench`. Not a test.
        .executableTarget(
            name: "LoopBench",
            dependencies: ["Diffuser"],
            path: "bench/swift-loop",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
