import AssetStore

extension AssetPackManager {
    /// How much a pack's deflated files may inflate to: the defence against
    /// decompression bombs, a few megabytes of deflate that declare gigabytes
    /// of zeros. An install (and ``AssetPackFile/inspect(at:limits:progress:)``)
    /// refuses a pack over a limit before inflating anything; a read refuses
    /// a file over the limit (installed under looser ones) before allocating
    /// for it. Either way the error is ``AssetPackError/Code/limitExceeded``.
    ///
    /// Only deflated files are held to the limits: a stored file is mapped,
    /// never allocated, and is no larger than its pack file.
    ///
    /// A container records its limits in its index (``setLimits(_:)``,
    /// `assetpack limits`); every manager that opens it enforces them unless
    /// ``Options/limits`` says otherwise. docs/limits.md gives the reasons
    /// for the defaults.
    public struct Limits: Sendable, Hashable {
        /// The largest size, in bytes, a deflated file may declare. Every
        /// read of such a file (its bytes, a memory-file descriptor)
        /// allocates this much. Default 1 GiB.
        public var maximumMemberSize: UInt64
        /// The largest ratio, to 1, of a deflated file's declared size to its
        /// compressed size. Default 200.
        public var maximumCompressionRatio: UInt64
        /// Files that declare at most this many bytes are not held to
        /// ``maximumCompressionRatio``: small files compress arbitrarily well
        /// and cost little whatever their ratio. Default 1 MiB.
        public var compressionRatioExemptSize: UInt64
        /// The largest sum, in bytes, of the declared sizes of one pack's
        /// deflated files. Default 16 GiB.
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
        public static let defaults = Limits()

        init(_ limits: PackLimits) {
            self.init(maximumMemberSize: limits.maximumMemberSize, maximumCompressionRatio: limits.maximumCompressionRatio,
                      compressionRatioExemptSize: limits.compressionRatioExemptSize, maximumPackSize: limits.maximumPackSize)
        }
    }

    /// The limits this manager enforces: ``Options/limits`` when it was
    /// opened with some, else the ones the container records, else
    /// ``Limits/defaults``. A change another process records is seen at once.
    ///
    /// - Throws: `.index`.
    public func limits() throws(AssetPackError) -> Limits {
        Limits(try engine { () throws(StoreError) in try store.limits() })
    }

    /// The limits the container records, or `nil` when it records none
    /// (the defaults apply).
    ///
    /// - Throws: `.index`.
    public func recordedLimits() throws(AssetPackError) -> Limits? {
        try engine { () throws(StoreError) in try store.recordedLimits() }.map(Limits.init)
    }

    /// Records `limits` as the container's, enforced by every manager that
    /// opens it (one opened with ``Options/limits`` keeps its own); `nil`
    /// removes the record, and the defaults apply. Packs installed already
    /// stay installed; a file of theirs over new, lower limits is refused
    /// when read.
    ///
    /// - Throws: `.index`.
    public func setLimits(_ limits: Limits?) throws(AssetPackError) {
        try engine { () throws(StoreError) in try store.setLimits(limits.map(PackLimits.init)) }
    }
}

extension PackLimits {
    init(_ limits: AssetPackManager.Limits) {
        self.init(maximumMemberSize: limits.maximumMemberSize, maximumCompressionRatio: limits.maximumCompressionRatio,
                  compressionRatioExemptSize: limits.compressionRatioExemptSize, maximumPackSize: limits.maximumPackSize)
    }
}
