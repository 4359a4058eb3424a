import AssetArchive
import AssetIndex
import AssetSystem

extension AssetStore {
    /// Checks the container without changing anything: every pack record has
    /// its archive with the recorded size; every member record lies inside
    /// its archive, agrees with its local header and overlaps no other; the
    /// path index agrees with the member records; no member records without a
    /// pack; no archives in `packs/` that no record names. With `deep`, each
    /// archive's SHA-256 and each member's CRC-32 are checked too.
    ///
    /// Everything is read in one snapshot, so installs running meanwhile
    /// cannot make it report damage that is not there.
    public func verify(options: VerificationOptions = VerificationOptions()) throws(AssetPackError) -> VerificationReport {
        var report = VerificationReport()
        try snapshot { (txn) throws(AssetPackError) in
            var records: [PackRecord] = []
            try indexCall { () throws(LMDBError) in
                try txn.forEach(packs) { key, value in
                    let id = String(decoding: key, as: UTF8.self)
                    do throws(AssetPackError) { records.append(try PackRecord(id: id, decoding: value)) } catch {
                        report.add("pack.record-damaged", pack: id, object: nil, error.description)
                    }
                    return true
                }
            }
            let selected = options.packs.isEmpty ? records : records.filter { options.packs.contains($0.id) }
            for id in options.packs where !records.contains(where: { $0.id == id }) {
                report.add("pack.not-installed", pack: id, object: nil, "asset pack '\(id)' is not installed")
            }
            for record in selected {
                try verifyPack(record, txn: txn, deep: options.deep, report: &report)
            }
            if options.packs.isEmpty {
                try verifyIndexConsistency(records: records, txn: txn, report: &report)
                verifyDirectories(records: records, report: &report)
            }
        }
        return report
    }

    private func verifyPack(_ record: PackRecord, txn: borrowing ReadTransaction, deep: Bool, report: inout VerificationReport) throws(AssetPackError) {
        report.packsChecked += 1
        let id = record.id
        let path = container.packsPath + "/" + record.archiveName
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path) } catch {
            report.add("pack.archive-missing", pack: id, object: record.archiveName, "archive \(path) is missing (\(error.message))")
            return
        }
        guard let status = try? fd.status(), status.size == Int64(record.archiveSize) else {
            report.add("pack.archive-size", pack: id, object: record.archiveName,
                       "archive \(path) is \((try? fd.status().size).map(String.init) ?? "?") bytes, the index says \(record.archiveSize)")
            return
        }
        let region: MappedRegion
        do { region = try MappedRegion(mapping: fd, count: Int(status.size)) } catch { throw .system(error.with(operation: "mmap", path: path)) }
        let bytes = region.bytes
        if deep {
            region.advise(.sequential)
            report.bytesChecked += record.archiveSize
            if SHA256.hash(bytes) != record.sha256 {
                report.add("pack.archive-sha256", pack: id, object: record.archiveName, "archive \(path) does not match its recorded SHA-256")
            }
        }
        let prefix = IndexSchema.memberPrefix(pack: id)
        var spans: [(start: UInt64, end: UInt64, path: String)] = []
        var count: UInt64 = 0
        try indexCall { () throws(LMDBError) in
            try txn.forEach(members, prefix: prefix) { key, value in
                count += 1
                let member = String(decoding: key[prefix.count...], as: UTF8.self)
                guard let m = MemberRecord(value) else {
                    report.add("member.record-damaged", pack: id, object: member, "member record of '\(member)' is damaged")
                    return true
                }
                report.membersChecked += 1
                if m.archiveKey != record.archiveKey {
                    report.add("member.wrong-archive", pack: id, object: member, "'\(member)' points at another version's archive")
                }
                let end = m.dataOffset.addingReportingOverflow(m.storedSize)
                guard !end.overflow, end.partialValue <= UInt64(bytes.count), m.localHeaderOffset < m.dataOffset else {
                    report.add("member.out-of-bounds", pack: id, object: member, "'\(member)' lies outside its archive")
                    return true
                }
                if let problem = Self.localHeaderProblem(m, path: key[prefix.count...], in: bytes) {
                    report.add("member.header-mismatch", pack: id, object: member, "local header of '\(member)' disagrees with the index: \(problem)")
                    return true
                }
                spans.append((m.localHeaderOffset, end.partialValue, member))
                if deep {
                    report.bytesChecked += m.storedSize
                    do throws(ArchiveError) { try ZipArchive.verify(m.entry(path: member), in: bytes, archive: path) } catch {
                        report.add("member.crc-mismatch", pack: id, object: member, error.description)
                    }
                }
                return true
            }
        }
        if count != record.memberCount {
            report.add("pack.member-count", pack: id, object: nil, "the index holds \(count) members of '\(id)', its record says \(record.memberCount)")
        }
        spans.sort { $0.start < $1.start }
        for (a, b) in zip(spans, spans.dropFirst()) where b.start < a.end {
            report.add("member.overlap", pack: id, object: b.path, "'\(b.path)' overlaps '\(a.path)'")
        }
    }

    /// Why the local header at the record's offset does not describe this
    /// member, or `nil` if it does.
    static func localHeaderProblem(_ m: MemberRecord, path: Slice<UnsafeRawBufferPointer>, in bytes: UnsafeRawBufferPointer) -> String? {
        let lho = Int(m.localHeaderOffset)
        guard lho + 30 <= bytes.count else { return "header past the end" }
        func u16(_ at: Int) -> Int { Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: lho + at, as: UInt16.self))) }
        guard bytes.loadUnaligned(fromByteOffset: lho, as: UInt32.self) == UInt32(0x04034b50).littleEndian else { return "no local header signature" }
        guard u16(8) == Int(m.method.rawValue) else { return "method \(u16(8))" }
        let nameLength = u16(26), extraLength = u16(28)
        guard lho + 30 + nameLength + extraLength == Int(m.dataOffset) else { return "data offset" }
        guard nameLength == path.count, bytes[(lho + 30)..<(lho + 30 + nameLength)].elementsEqual(path) else { return "name" }
        return nil
    }

    /// The path index and member records agree; no members without a pack.
    private func verifyIndexConsistency(records: [PackRecord], txn: borrowing ReadTransaction, report: inout VerificationReport) throws(AssetPackError) {
        let ids = Set(records.map(\.id))
        var expected: [[UInt8]: [String]] = [:]
        try indexCall { () throws(LMDBError) in
            try txn.forEach(members) { key, _ in
                guard let zero = key.firstIndex(of: 0) else { return true }
                let pack = String(decoding: key[..<zero], as: UTF8.self)
                let path = Array(key[(zero + 1)...])
                if !ids.contains(pack) {
                    report.add("member.orphan", pack: pack, object: String(decoding: path, as: UTF8.self), "member record of a pack that is not installed")
                }
                expected[path, default: []].append(pack)
                return true
            }
        }
        try indexCall { () throws(LMDBError) in
            try txn.forEach(paths) { key, value in
                let path = Array(key)
                let listed = PathIndex.packs(in: value)
                let want = (expected.removeValue(forKey: path) ?? []).sorted()
                if listed != want {
                    report.add("paths.mismatch", pack: nil, object: String(decoding: path, as: UTF8.self),
                               "path index lists \(listed) but members are in \(want)")
                }
                return true
            }
        }
        for (path, packs) in expected {
            report.add("paths.missing", pack: packs.first, object: String(decoding: path, as: UTF8.self), "path index has no entry for a member of \(packs)")
        }
    }

    /// Files in `packs/` no record names; leftovers in `staging/`.
    private func verifyDirectories(records: [PackRecord], report: inout VerificationReport) {
        let named = Set(records.map(\.archiveName))
        for name in FileSystem.names(in: container.packsPath).sorted() where !named.contains(name) {
            report.add("archive.orphan", pack: IndexSchema.parseArchiveName(name)?.pack, object: name, "packs/\(name) belongs to no installed pack")
        }
        for name in FileSystem.names(in: container.stagingPath).sorted() {
            report.add("staging.leftover", .reclaimable, pack: nil, object: name, "staging/\(name) is left over from an interrupted install")
        }
    }
}
