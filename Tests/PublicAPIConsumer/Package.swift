// swift-tools-version:6.0
// A separate package that links AssetPacks by path, as a program would: it
// must build and run with one `import AssetPacks` and see nothing of the
// engine (scripts/check-public-api builds and runs it).
import PackageDescription

let package = Package(
    name: "PublicAPIConsumer",
    dependencies: [.package(name: "AssetPacks", path: "../..")],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [.product(name: "AssetPacks", package: "AssetPacks")]),
    ],
    swiftLanguageModes: [.v6]
)
