import AssetDelivery

/// The piece map parser, fed arbitrary bytes by the fuzz harness
/// (`Fuzz/README.md`) and by its regression test. Nothing else calls this.
package enum PieceMapFuzzing {
    /// Parses `bytes` as a piece map. A map that parses must encode to bytes
    /// that parse equal (and encode the same again); its members and glue
    /// ranges must tile the file exactly, the glue ranges summing to the
    /// glue's size; and it must validate against the catalog entry it
    /// describes. Returns whether it parsed.
    @discardableResult
    package static func pieceMap(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let map = try? PieceMap.parse(Array(bytes), path: "fuzz.pieces") else { return false }
        let encoded = map.encoded()
        guard let again = try? PieceMap.parse(encoded, path: "fuzz.pieces") else {
            preconditionFailure("an accepted piece map encodes to bytes its parser refuses")
        }
        precondition(again == map, "a piece map does not survive encoding and parsing")
        precondition(again.encoded() == encoded, "encoding a piece map is not deterministic")
        var pieces = map.glueRanges.map { (range: $0, glue: true) } + map.members.filter { $0.size > 0 }.map { (range: $0.range, glue: false) }
        pieces.sort { $0.range.lowerBound < $1.range.lowerBound }
        var at: UInt64 = 0
        for piece in pieces {
            precondition(piece.range.lowerBound == at && !piece.range.isEmpty, "members and glue do not tile the file")
            at = piece.range.upperBound
        }
        precondition(at == map.size, "members and glue do not cover the file")
        precondition(map.glueRanges.reduce(0) { $0 + UInt64($1.count) } == map.glue.size, "the glue ranges are not the glue's size")
        let entry = Catalog.Entry(id: map.pack, version: map.version, size: map.size, sha256: map.sha256, downloadPolicy: .onDemand,
                                  platforms: [], url: "fuzz.zip")
        precondition((try? map.validate(against: entry)) != nil, "a map does not validate against the entry it describes")
        return true
    }
}
