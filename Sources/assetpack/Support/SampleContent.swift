import Foundation
import AssetSystem

/// The demo's built-in sample: a manifest, text that deflates, and media
/// that is stored (one member large enough to be page-aligned).
enum SampleContent {
    /// A deterministic byte pattern (xorshift), so runs are repeatable.
    static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var x = seed | 1
        return (0..<count).map { _ in
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            return UInt8(truncatingIfNeeded: x)
        }
    }

    /// Writes the sample below `root`; returns member path → bytes.
    static func write(to root: String) throws -> [String: Data] {
        let manifest = """
            {
                // The demo's pack: prefetched after first installation and updates.
                "assetPackID": "com.example.Demo",
                "downloadPolicy": { "prefetch": { "installationEventTypes": ["firstInstallation", "subsequentUpdate"] } },
                "fileSelectors": [
                    { "file": "README.txt" },
                    { "directory": "Levels" },
                    { "directory": "Media" }
                ],
                "platforms": ["linux", "iOS", "macOS"]
            }
            """
        var files: [String: Data] = [
            "README.txt": Data(String(repeating: "AssetPacks demo: this text deflates well. ", count: 200).utf8),
            "Media/intro.png": Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + noise(100_000, seed: 7)),
            "Media/click.ogg": Data(Array("OggS".utf8) + noise(5_000, seed: 11)),
        ]
        for level in 1...3 {
            let tiles = (0..<400).map { "\"tile\($0 * level % 97)\"" }.joined(separator: ", ")
            files["Levels/level\(level).json"] = Data("{\"level\": \(level), \"tiles\": [\(tiles)]}".utf8)
        }
        for (path, bytes) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try bytes.write(to: URL(fileURLWithPath: full))
        }
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: root + "/manifest.json"))
        return files
    }

    /// Changes README.txt for the update step; returns its new bytes.
    static func update(_ root: String) throws -> Data {
        let bytes = Data(String(repeating: "AssetPacks demo, version 2. ", count: 300).utf8)
        try bytes.write(to: URL(fileURLWithPath: root + "/README.txt"))
        return bytes
    }
}

/// Reads `/proc/self/maps` to show where bytes live.
enum ProcessMaps {
    /// The mapped file (and range) that holds `data`'s bytes, when the
    /// mapping's file path contains `file`.
    static func mapping(containing data: Data, file: String) -> String? {
        // Read to the end: procfs hands the file out a page per read.
    guard let raw = try? FileDescriptor.open("/proc/self/maps").readToEnd() else { return nil }
    let maps = String(decoding: raw, as: UTF8.self)
        let address = data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        for line in maps.split(separator: "\n") where line.contains(file) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let lo = UInt(range[0], radix: 16), let hi = UInt(range[1], radix: 16) else { continue }
            if address >= lo && address + UInt(data.count) <= hi {
                return ((fields.last.map(String.init) ?? "") as NSString).lastPathComponent
            }
        }
        return nil
    }
}
