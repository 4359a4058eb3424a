/// `codec`: libdeflate against zlib on the `small-read-deflated` members —
/// whole-member raw inflate into a buffer of the known size, and CRC-32 of
/// the inflated bytes. Decides whether AssetPacks inflates whole members
/// with libdeflate (if it is more than 1.5× faster here).
enum CodecScenario {
    static let scenario = Scenario(
        "codec", "libdeflate against zlib: whole-member inflate and CRC-32 of the deflated members"
    ) { ctx in try run(ctx) }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let d = try SmallDataset.prepare(ctx.workspace, deflated: true)
        let streams = try ArchiveStreams(zipPath: d.zipPath, paths: d.members.paths)
        let codec = DeflateStreams(raw: streams.slices, sizes: d.members.sizes, adler32: try d.adler32())
        let sizes = d.members.sizes
        let buffer = ByteBuffer(capacity: d.largest)
        let inflate = try withExtendedLifetime(streams) {
            try Competition.run([
                Contender("libdeflate", bytes: sizes,
                          LibdeflateInflate(streams: codec, buffer: buffer, decompressor: .init())),
                Contender("zlib", bytes: sizes, ZlibInflate(streams: codec, buffer: buffer)),
            ], items: d.members.count, plan: ctx.scale.plan, seed: 0xC1)
        }
        // The inflated members, kept in memory for the CRC pass.
        let plain = ByteBuffer(capacity: d.members.totalBytes)
        var slices: [UnsafeRawBufferPointer] = []
        var at = 0
        var one = LibdeflateInflate(streams: codec, buffer: ByteBuffer(capacity: d.largest), decompressor: .init())
        for i in 0 ..< d.members.count {
            let n = try withExtendedLifetime(streams) { try one.run(i) }
            (plain.pointer + at).copyMemory(from: one.buffer.pointer, byteCount: n)
            slices.append(UnsafeRawBufferPointer(start: plain.pointer + at, count: n))
            at += n
        }
        let crc = try Competition.run([
            Contender("libdeflate", bytes: sizes, CRC32Pass(members: slices, useLibdeflate: true)),
            Contender("zlib", bytes: sizes, CRC32Pass(members: slices, useLibdeflate: false)),
        ], items: d.members.count, plan: ctx.scale.plan, seed: 0xC2)
        let members = "\(Format.count(d.members.count)) deflated text members of 1–16 KiB"
        return [
            ScenarioResult(name: "codec/inflate", summary: "whole-member raw inflate of \(members), into a buffer of the known size",
                           measurements: inflate, basis: .throughput, reference: "libdeflate"),
            ScenarioResult(name: "codec/crc32", summary: "CRC-32 of the inflated \(members)",
                           measurements: withExtendedLifetime(plain) { crc }, basis: .throughput, reference: "libdeflate"),
        ]
    }
}
