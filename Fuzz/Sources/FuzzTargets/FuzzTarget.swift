import AssetArchive
import AssetJSON
import AssetPacks
import Foundation

/// The decoders the fuzz harness feeds (`Fuzz/README.md`): one case per
/// target, named as `scripts/fuzz` and `Fuzz/Corpus/<name>` name it.
///
/// ``run(_:)`` is all a target does with one input, in the fuzzer and in
/// the regression test alike. A decoder may refuse any input; a target
/// traps only when one crashes or breaks its own contract (a `precondition`
/// here or in the decoder).
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// The ZIP reader: parse, list, verify and extract every member.
    case zip
    /// The manifest parser, and the JSON parser under it in both syntaxes.
    case manifest
    /// The daemon's request decoder, over a stream of requests.
    case daemonRequest = "daemon-request"
    /// The client's reply decoder: a placement or an error.
    case daemonReply = "daemon-reply"
    /// The catalog parser and, after a NUL byte, the signature check.
    case catalog
    /// `assetpack serve`'s request parser, over a stream of requests.
    case httpRequest = "http-request"
    /// The piece map parser (delta updates).
    case pieceMap = "piece-map"

    /// Feeds one input to the target's decoder, and returns whether the
    /// decoder accepted it (an archive or manifest parsed, a request or reply
    /// decoded).
    @discardableResult
    package func run(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .zip: return Self.zip(bytes)
        case .manifest: return Self.manifest(bytes)
        case .daemonRequest: return DaemonProtocolFuzzing.requests(bytes)
        case .daemonReply: return DaemonProtocolFuzzing.reply(bytes)
        case .catalog: return CatalogFuzzing.catalog(bytes)
        case .httpRequest: return HTTPRequestFuzzing.requests(bytes)
        case .pieceMap: return PieceMapFuzzing.pieceMap(bytes)
        }
    }

    /// Parses `bytes` as an archive, lists its members, and checks each one
    /// twice: ``ZipArchive/verify(_:in:archive:)`` and a full extraction,
    /// which must agree, and whose bytes must have the declared size and CRC-32.
    static func zip(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let name = "fuzz.zip"
        guard let archive = try? ZipArchive.parse(bytes, name: name) else { return false }
        let paths = Set(archive.entries.map(\.path))
        precondition(paths.count == archive.entries.count, "an accepted archive has two members of one name")
        for entry in archive.entries {
            let verified = (try? ZipArchive.verify(entry, in: bytes, archive: name)) != nil
            do throws(ArchiveError) {
                let data = try ZipArchive.extract(entry, from: bytes, archive: name)
                precondition(verified, "extract accepted \(entry.path), verify refused it")
                precondition(UInt64(data.count) == entry.uncompressedSize, "extracted size is not the declared size")
                precondition(data.withUnsafeBytes { CRC32.checksum($0) } == entry.crc32, "extracted bytes fail their CRC-32")
            } catch {
                precondition(!verified, "verify accepted \(entry.path), extract refused it: \(error)")
            }
        }
        return true
    }

    /// Parses `bytes` as a manifest, then as JSON in both syntaxes; a value
    /// that parses must encode to strict JSON that parses back to itself.
    static func manifest(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let accepted = (try? AssetPackManifest.parse(Data(bytes), path: "fuzz.json")) != nil
        for options in [JSONValue.ParseOptions.strict, .jsonWithComments] {
            guard let value = try? JSONValue.parse(bytes, options: options) else { continue }
            for sorted in [false, true] {
                let encoded = value.encoded(sortedKeys: sorted)
                do throws(JSONError) {
                    let again = try JSONValue.parse(encoded, options: .strict)
                    precondition(again == value, "a value does not survive encoding and parsing")
                } catch {
                    preconditionFailure("the encoder wrote JSON its parser refuses: \(error)")
                }
            }
        }
        return accepted
    }
}
