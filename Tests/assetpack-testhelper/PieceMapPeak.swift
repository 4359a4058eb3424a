import Foundation
import AssetDelivery
import TestSupport

/// `piece-map-peak`: parses the piece map in `--file` as a client does and
/// reports the members it found and what the parse added to this process's
/// peak resident set (`VmHWM` over `VmRSS` before it, from
/// `/proc/self/status`, the peak reset first), in KiB, beside the map's size.
enum PieceMapPeak {
    static func run(_ options: Options) throws -> [String: Any] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: options.string("file"))))
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = ResidentMemory.status("VmRSS:")
        let map = try PieceMap.parse(bytes, path: "map.pieces")
        let peak = ResidentMemory.status("VmHWM:")
        return ["members": map.members.count, "mapBytes": bytes.count, "addedKiB": peak - before]
    }
}
