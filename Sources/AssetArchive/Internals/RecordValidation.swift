/// Validates one central-directory record on its own: its name, flags,
/// method, ZIP64 values, file type and sizes.
struct RecordValidation {
    let bytes: UnsafeRawBufferPointer
    let name: String
    /// The record's offset.
    let record: Int
    /// Whether the record is a directory entry (its name ends in `/`).
    private(set) var isDirectory = false
    /// Whether a size or offset came from a ZIP64 extra field.
    private(set) var usedZip64 = false

    init(bytes: UnsafeRawBufferPointer, name: String, record: Int) {
        self.bytes = bytes
        self.name = name
        self.record = record
    }

    /// Checks the record and returns what it declares.
    mutating func validate() throws(ArchiveError) -> DeclaredMember {
        let nameCount = Int(bytes.u16(record + 28))
        let extraCount = Int(bytes.u16(record + 30))
        let nameStart = record + ZipFormat.centralHeaderSize
        let extra = nameStart + nameCount ..< nameStart + nameCount + extraCount
        let flags = bytes.u16(record + 8)
        let memberName = try MemberName.decode(
            bytes, nameStart: nameStart, nameCount: nameCount, extra: extra, flags: flags, archive: name)
        isDirectory = memberName.isDirectory
        let path = memberName.path

        guard flags & ZipFormat.flagsMeaningEncrypted == 0 else { throw .encrypted(archive: name, path: path) }
        let methodNumber = bytes.u16(record + 10)
        guard let method = CompressionMethod(rawValue: methodNumber) else {
            throw .unsupportedMethod(archive: name, path: path, method: methodNumber)
        }

        var values = Zip64Values(
            uncompressedSize: UInt64(bytes.u32(record + 24)), compressedSize: UInt64(bytes.u32(record + 20)),
            localHeaderOffset: UInt64(bytes.u32(record + 42)), diskStart: UInt32(bytes.u16(record + 34)))
        if values.needsExtraField {
            do {
                let zip64 = try ExtraFields.find(ZipFormat.zip64ExtraID, in: bytes, block: extra)
                try ExtraFields.resolveZip64(&values, in: bytes, data: zip64)
            } catch {
                throw .malformedEntry(archive: name, path: path, problem: .extraField)
            }
            usedZip64 = true
        }
        guard values.diskStart == 0 else { throw .inconsistentDirectory(archive: name, problem: .multipleDisks) }

        try checkFileType(path: path)
        try checkSizes(values, method: method, path: path)
        return DeclaredMember(
            path: path, flags: flags, method: method, crc32: bytes.u32(record + 16),
            compressedSize: values.compressedSize, uncompressedSize: values.uncompressedSize,
            localHeaderOffset: values.localHeaderOffset, nameStart: nameStart, nameCount: nameCount)
    }

    /// Refuses Unix file types other than regular files and directories.
    /// The mode is read only when "version made by" names a Unix host; a
    /// mode with no type bits (as Python's `zipfile` writes) counts as a
    /// regular file. A FIFO named `-` is how Info-ZIP's `zip` records
    /// standard input read from a pipe, and is read as the regular file it
    /// holds, as `unzip` extracts it.
    private func checkFileType(path: String) throws(ArchiveError) {
        let versionMadeBy = bytes.u16(record + 4)
        guard ZipFormat.hostHasUnixMode(versionMadeBy) else { return }
        let type = (bytes.u32(record + 38) >> 16) & 0o170000
        let kind: ArchiveError.EntryKind
        switch type {
        case 0, 0o100000: return
        case 0o040000:
            if isDirectory { return }
            kind = .directory
        case 0o120000: kind = .symbolicLink
        case 0o010000:
            if path == "-" { return }
            kind = .fifo
        case 0o020000: kind = .characterDevice
        case 0o060000: kind = .blockDevice
        case 0o140000: kind = .socket
        default: kind = .unknown(mode: type)
        }
        throw .nonRegularEntry(archive: name, path: path, kind: kind)
    }

    /// Why sizes are impossible for `method`: stored sizes must be equal,
    /// and deflate cannot expand data more than about 1,032 times.
    static func sizeProblem(
        method: CompressionMethod, compressedSize: UInt64, uncompressedSize: UInt64
    ) -> ArchiveError.EntryProblem? {
        switch method {
        case .stored:
            return compressedSize == uncompressedSize ? nil : .storedSizes
        case .deflated:
            let (most, overflow) = compressedSize.multipliedReportingOverflow(by: ZipFormat.maximumDeflateRatio)
            return overflow || uncompressedSize <= most + 1024 ? nil : .impossibleRatio
        }
    }

    /// Stored sizes must be equal, deflated ones possible, directories empty.
    private func checkSizes(_ values: Zip64Values, method: CompressionMethod, path: String) throws(ArchiveError) {
        if isDirectory && values.uncompressedSize != 0 {
            throw .malformedEntry(archive: name, path: path, problem: .directoryWithData)
        }
        if let problem = Self.sizeProblem(
            method: method, compressedSize: values.compressedSize, uncompressedSize: values.uncompressedSize) {
            throw .malformedEntry(archive: name, path: path, problem: problem)
        }
    }
}
