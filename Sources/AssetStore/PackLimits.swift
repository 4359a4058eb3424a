public import AssetArchive

/// How much a pack's deflated members may inflate to: the defence against
/// decompression bombs (a few megabytes of deflate that declare gigabytes of
/// zeros). Installs refuse a pack over a limit before inflating anything, and
/// reads refuse a member over the limit (installed under looser limits)
/// before allocating for it.
///
/// Only deflated members are held to the limits. A stored member is mapped,
/// never allocated, and is no larger than the file that holds it.
///
/// A container records its limits in the index (`meta`, key `limits`), read
/// by every store that opens it; without a record the ``defaults`` apply.
/// docs/limits.md says why each default is what it is.
public struct PackLimits: Sendable, Hashable {
    /// The largest size a deflated member may declare. Every read of such a
    /// member (its bytes, a memory-file descriptor) allocates this much.
    /// Default 1 GiB.
    public var maximumMemberSize: UInt64
    /// The largest ratio, to 1, of a deflated member's declared size to its
    /// compressed size. Default 200.
    public var maximumCompressionRatio: UInt64
    /// Members that declare at most this many bytes are not held to
    /// ``maximumCompressionRatio``: small files compress arbitrarily well and
    /// cost little whatever their ratio. Default 1 MiB.
    public var compressionRatioExemptSize: UInt64
    /// The largest sum of the declared sizes of a pack's deflated members.
    /// Default 16 GiB.
    public var maximumPackSize: UInt64

    /// Limits; each one left out is the default.
    public init(maximumMemberSize: UInt64 = 1 << 30, maximumCompressionRatio: UInt64 = 200,
                compressionRatioExemptSize: UInt64 = 1 << 20, maximumPackSize: UInt64 = 16 << 30) {
        self.maximumMemberSize = maximumMemberSize
        self.maximumCompressionRatio = maximumCompressionRatio
        self.compressionRatioExemptSize = compressionRatioExemptSize
        self.maximumPackSize = maximumPackSize
    }

    /// The limits of a container that records none.
    public static let defaults = PackLimits()

    /// Why a member with these sizes and method is over a limit, or `nil`.
    /// Stored members never are.
    public func problem(method: CompressionMethod, size: UInt64, storedSize: UInt64) -> StoreError.LimitProblem? {
        guard method == .deflated else { return nil }
        if size > maximumMemberSize { return .memberTooLarge(size: size, maximum: maximumMemberSize) }
        guard size > compressionRatioExemptSize else { return nil }
        let (most, overflow) = storedSize.multipliedReportingOverflow(by: maximumCompressionRatio)
        if !overflow && size > most {
            return .compressionRatioTooHigh(size: size, storedSize: storedSize, maximum: maximumCompressionRatio)
        }
        return nil
    }

    /// Checks every member of `archive`, then the sum of the deflated
    /// members' sizes, from what the archive declares: nothing is inflated.
    ///
    /// - Throws: `StoreError.limitExceeded` naming `path`, the first member
    ///   over a limit (none for the pack's sum), its sizes and the limit.
    public func check(_ archive: ZipArchive, path: String) throws(StoreError) {
        var check = Check(self)
        for entry in archive.entries { check.add(entry) }
        try check.finish(path: path)
    }

    /// ``check(_:path:)`` fed one member at a time, as a walk over an
    /// archive's records meets them, keeping the first member over a limit
    /// and the sum: nothing per member.
    struct Check {
        let limits: PackLimits
        private var total: UInt64 = 0
        private var first: (member: String, problem: StoreError.LimitProblem)?

        init(_ limits: PackLimits) { self.limits = limits }

        mutating func add(_ entry: ArchiveEntry) {
            if first == nil,
               let problem = limits.problem(method: entry.method, size: entry.uncompressedSize, storedSize: entry.compressedSize) {
                first = (entry.path, problem)
            }
            if entry.method == .deflated {
                let (sum, overflow) = total.addingReportingOverflow(entry.uncompressedSize)
                total = overflow ? .max : sum
            }
        }

        /// Throws what ``check(_:path:)`` throws for the members added.
        func finish(path: String) throws(StoreError) {
            if let first { throw .limitExceeded(archive: path, pack: nil, member: first.member, problem: first.problem) }
            if total > limits.maximumPackSize {
                throw .limitExceeded(
                    archive: path, pack: nil, member: nil,
                    problem: .packTooLarge(size: total, maximum: limits.maximumPackSize))
            }
        }
    }
}

extension PackLimits {
    /// The record's format byte.
    static let format: UInt8 = 1
    /// The record's length: the format byte and four little-endian u64.
    static let encodedSize = 1 + 4 * 8

    /// The record the index keeps under `meta/limits`.
    var encoded: [UInt8] {
        var bytes = [Self.format]
        for value in [maximumMemberSize, maximumCompressionRatio, compressionRatioExemptSize, maximumPackSize] {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// Decodes a `meta/limits` record; `nil` when it is not one this build
    /// writes (the store then applies the defaults, which refuse more).
    init?(decoding bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.encodedSize, bytes[0] == Self.format else { return nil }
        func field(_ i: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 1 + 8 * i, as: UInt64.self)) }
        self.init(maximumMemberSize: field(0), maximumCompressionRatio: field(1),
                  compressionRatioExemptSize: field(2), maximumPackSize: field(3))
    }
}

extension StoreError.LimitProblem {
    /// The problem as a clause.
    public var text: String {
        switch self {
        case .memberTooLarge(let size, let maximum):
            return "declares \(size) bytes inflated, more than the limit of \(maximum) bytes"
        case .compressionRatioTooHigh(let size, let storedSize, let maximum):
            let ratio = storedSize == 0 ? size : (size + storedSize - 1) / storedSize
            return "declares \(size) bytes inflated from \(storedSize) (\(ratio):1), more than the limit of \(maximum):1"
        case .packTooLarge(let size, let maximum):
            return "deflated members declare \(size) bytes inflated in all, more than the limit of \(maximum) bytes"
        }
    }
}
