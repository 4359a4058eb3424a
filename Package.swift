// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AssetPacks",
    products: [
        .library(name: "AssetPacks", targets: ["AssetPacks"]),
        .executable(name: "assetpack", targets: ["assetpack"]),
        .executable(name: "assetpack-bench", targets: ["assetpack-bench"]),
        // libassetpacks: the C API (include/assetpacks.h of CAssetPacksHeader).
        .library(name: "assetpacks", type: .dynamic, targets: ["AssetPacksC"]),
    ],
    targets: [
        // C libraries from Debian, found through pkg-config.
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // The HTTP client of downloads (libcurl easy; thin setopt/getinfo helpers in its shim).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // Whole-buffer inflate, where the inflated size is known (zlib streams the rest).
        .systemLibrary(name: "CLibdeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        // The syscalls Swift should not spell itself.
        .target(name: "CAssetShim"),
        // libassetpacks-client: the daemon's protocol in plain C, libc only. Built here so
        // that `swift build` compiles it; no Swift target links it (scripts/build-c-client
        // makes the library).
        .target(name: "CAssetPacksClient"),

        .target(name: "AssetSystem", dependencies: ["CAssetShim"]),
        // JSON of the project's own: manifests, recorded manifests, catalogs.
        .target(name: "AssetJSON"),
        .target(name: "AssetArchive", dependencies: ["AssetSystem", "CZlib", "CLibdeflate", "CCrypto"]),
        .target(name: "AssetIndex", dependencies: ["AssetSystem", "CLMDB"]),
        .target(name: "AssetStore", dependencies: ["AssetSystem", "AssetArchive", "AssetIndex", "AssetJSON"]),
        // Catalogs: parse, sign (Ed25519), verify, rollback state; publishing.
        .target(name: "AssetDelivery", dependencies: ["AssetStore", "AssetArchive", "AssetJSON", "AssetSystem", "CCrypto", "CCurl"]),
        .target(name: "AssetPacks", dependencies: ["AssetStore", "AssetJSON", "AssetDelivery", "AssetArchive", "AssetIndex", "AssetSystem"],
                swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        // `assetpack serve`: the development HTTP/1.1 server; only the CLI links it.
        .target(name: "AssetServer", dependencies: ["AssetSystem", "CAssetShim"]),
        // libassetpacks: the C API over AssetPacks (@_cdecl), and its
        // hand-written header as a C target of its own, so Swift takes the
        // structures and constants from the header C programs include.
        .target(name: "CAssetPacksHeader"),
        .target(name: "AssetPacksC", dependencies: ["AssetPacks", "CAssetPacksHeader"]),
        .executableTarget(name: "assetpack", dependencies: ["AssetPacks", "AssetServer", "AssetSystem"],
                          swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),

        // Benchmark harness and the peers it measures against (linked only here).
        .systemLibrary(name: "CSQLite", path: "Benchmarks/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibzip", path: "Benchmarks/CLibzip", pkgConfig: "libzip",
                       providers: [.apt(["libzip-dev"])]),
        // PhysicsFS, what C games read ZIP archives with (Debian ships no physfs.pc).
        .systemLibrary(name: "CPhysFS", path: "Benchmarks/CPhysFS", providers: [.apt(["libphysfs-dev"])]),
        // sched_setaffinity for the harness (glibc declares it under _GNU_SOURCE only).
        .systemLibrary(name: "CSched", path: "Benchmarks/CSched"),
        .executableTarget(
            name: "assetpack-bench",
            dependencies: ["AssetPacks", "AssetStore", "AssetIndex", "AssetArchive", "AssetSystem", "AssetDelivery",
                           "CLMDB", "CZlib", "CSQLite", "CLibzip", "CLibdeflate",
                           // nginx and `assetpack serve` as processes, curl as their client.
                           "TestSupport",
                           // small-read through libassetpacks' C API, and PhysicsFS as a peer.
                           "AssetPacksC", "CPhysFS", "CSched"],
            path: "Benchmarks/assetpack-bench"),

        // What the test targets share: temporary directories, running other
        // programs, test data. Foundation only.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "AssetSystemTests", dependencies: ["AssetSystem", "TestSupport"]),
        .testTarget(name: "AssetJSONTests", dependencies: ["AssetJSON", "TestSupport"]),
        .testTarget(name: "AssetArchiveTests", dependencies: ["AssetArchive", "AssetSystem", "TestSupport"]),
        .testTarget(name: "AssetIndexTests", dependencies: ["AssetIndex", "AssetSystem", "TestSupport"]),
        .testTarget(name: "AssetStoreTests", dependencies: ["AssetStore", "AssetArchive", "AssetIndex", "AssetSystem", "TestSupport"]),
        .testTarget(name: "AssetDeliveryTests", dependencies: ["AssetDelivery", "AssetStore", "AssetArchive", "AssetSystem", "TestSupport",
                                                               // the downloader killed mid-download; `serve`'s faults
                                                               "assetpack-testhelper", "assetpack"]),
        .testTarget(name: "AssetPacksTests", dependencies: ["AssetPacks", "AssetDelivery", "AssetStore", "AssetIndex", "AssetArchive", "AssetSystem", "TestSupport"]),
        .testTarget(name: "AssetServerTests", dependencies: ["AssetServer", "AssetSystem", "TestSupport"]),
        .testTarget(name: "assetpackTests", dependencies: ["AssetPacks", "AssetStore", "AssetIndex", "AssetArchive", "AssetSystem", "assetpack", "assetpack-testhelper", "TestSupport"]),
        // The other processes of the cross-process tests (stress readers and
        // writers, a reader that dies holding a snapshot, writers killed at a
        // crash point); kept out of `assetpack`, built beside it.
        .executableTarget(
            name: "assetpack-testhelper",
            dependencies: ["AssetPacks", "AssetStore", "AssetArchive", "AssetIndex", "AssetDelivery", "AssetSystem", "TestSupport"],
            path: "Tests/assetpack-testhelper"),

        // The fuzz harness (Fuzz/README.md): the decoders' fuzz targets, one
        // program that hands them to libFuzzer when scripts/fuzz builds it
        // (and replays files otherwise), and the test that replays every
        // seed and regression input in the default suite.
        .target(name: "CFuzzerDriver", path: "Fuzz/Sources/CFuzzerDriver"),
        .target(name: "FuzzTargets", dependencies: ["AssetArchive", "AssetJSON", "AssetPacks", "AssetServer", "AssetSystem"],
                path: "Fuzz/Sources/FuzzTargets"),
        .executableTarget(name: "assetpack-fuzz", dependencies: ["FuzzTargets", "CFuzzerDriver"],
                          path: "Fuzz/Sources/assetpack-fuzz"),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets", "TestSupport"]),
        // C programs built with cc against libassetpacks (the debug build's,
        // found beside the test bundle) and run against real containers.
        .testTarget(name: "CLibraryTests", dependencies: ["AssetPacks", "TestSupport", "assetpack"], exclude: ["Programs"]),
    ],
    swiftLanguageModes: [.v6]
)
