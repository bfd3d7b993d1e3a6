// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Diffuser",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Diffuser", targets: ["Diffuser"]),
    ],
    targets: [
        // The single implementation of Diffuser and Fuser semantics. No Foundation.
        .target(
            name: "Diffuser",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "DiffuserTests",
            dependencies: ["Diffuser"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Prints ns per run against hand-written caching code. Not a test.
        .executableTarget(
            name: "DiffuserBench",
            dependencies: ["Diffuser"],
            path: "bench/swift",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
