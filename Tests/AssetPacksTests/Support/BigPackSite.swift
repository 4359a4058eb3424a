import Foundation
import AssetPacks
import TestSupport

/// A published directory with one pack, `Big` (noise, one stored member
/// `big.bin`), and managers of a container that download from it.
struct BigPackSite {
    let dir: TemporaryDirectory

    init(_ label: String) { dir = TemporaryDirectory(label) }

    /// The member's bytes in `version`.
    static func content(size: Int, version: UInt64) -> [UInt8] { noise(size, seed: version) }

    /// Publishes `Big` in `version` (`size` bytes of noise) to `site/`; the pack file is `Big-<version>.zip`.
    func publish(version: UInt64, size: Int = 2 << 20) throws {
        try dir.write("content/big.bin", Self.content(size: size, version: version))
        let manifest = AssetPackManifest(assetPackID: "Big", downloadPolicy: .onDemand,
                                         fileSelectors: [.file("big.bin", compression: .stored)], platforms: [.linux], version: version)
        try Packager.package(manifest, root: dir.directory("content"), manifestPath: "m.json", output: dir.file("Big-\(version).zip"))
        _ = try AssetPackPublisher.publish(packsAt: [dir.file("Big-\(version).zip")], to: dir.file("site"), options: .init())
    }

    /// nginx serving `site/`, with `extra` directives (`limit_rate 1m;`).
    func nginx(extra: String = "") throws -> NginxHost { try NginxHost(root: dir.file("site"), extra: extra) }

    /// A manager of `container/` downloading from `nginx`'s catalog, retrying quickly.
    func manager(_ nginx: NginxHost) throws -> AssetPackManager {
        var source = AssetPackManager.CatalogSource(url: nginx.baseURL + "/catalog.json")
        source.initialBackoff = 0.01
        return try AssetPackManager(container: .init(path: dir.file("container")), options: .init(catalog: source))
    }
}
