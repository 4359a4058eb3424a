import AssetPacks
import AssetSystem
import AssetStore

/// `contents(at:searchingInAssetPackWithID:)`: the bytes of a member as
/// `Data` (zero-copy for stored members), released again at once, or first
/// summed when consuming.
struct ContentsRead: Operation {
    let manager: AssetPackManager
    let pack: String?
    let paths: [String]
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let data = try manager.contents(at: paths[item], searchingInAssetPackWithID: pack)
        return consume ? Int(truncatingIfNeeded: data.withUnsafeBytes { sumBytes($0) }) : data.count
    }
}

/// `descriptor(for:searchingInAssetPackWithID:options:)`, the descriptor
/// closed again at once.
struct DescriptorHandout: Operation {
    let manager: AssetPackManager
    let pack: String
    let paths: [String]
    let options: AssetDescriptor.Options

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let d = try manager.descriptor(for: paths[item], searchingInAssetPackWithID: pack, options: options)
        return Int(d.length)
    }
}

/// Opening a container (a new manager: directories, LMDB environment,
/// schema check) and reading one member; the manager is released after,
/// which closes the environment, so the next operation opens it again.
struct OpenAndRead: Operation {
    let container: GroupContainer
    let packs: [String]
    let paths: [String]

    mutating func run(_ item: Int) throws -> Int {
        let manager = try AssetPackManager(container: .init(path: container.path))
        return try manager.contents(at: paths[item], searchingInAssetPackWithID: packs[item]).count
    }
}
