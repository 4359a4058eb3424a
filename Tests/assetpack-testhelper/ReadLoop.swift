import Foundation
import AssetStore

/// A reader process for the stress test: reads the common members of the
/// stress pack over and over — as zero-copy bytes, through descriptors and
/// through standalone descriptors — and checks that every read gives
/// exactly one version's bytes. It also keeps some bytes and descriptors
/// from earlier reads and checks them again later, after writers have
/// replaced or removed the archive they came from.
enum ReadLoop {
    /// An earlier read that must stay readable and unchanged.
    struct Held {
        var data: Data?
        var fd: Int32 = -1
        var offset: Int64 = 0
        var length: Int64 = 0
        let version: Int
        let path: String
    }

    static func run(_ options: Options) throws -> [String: Any] {
        let id = options.string("id")
        let versions = options.int("versions")
        let deadline = Date().addingTimeInterval(options.double("seconds", default: 3))
        let expected = StressPack.expected(versions: versions)
        let members = StressPack.common
        let store = try AssetStore(container: GroupContainer(path: options.string("container")), options: options.storeOptions())

        var reads = 0, bytes = 0, notFound = 0, heldChecks = 0, archiveMissing = 0
        var byVersion: [Int: Int] = [:]
        var errors: [String] = []
        var held: [Held] = []
        defer { for h in held where h.fd >= 0 { close(h.fd) } }

        func check(_ raw: UnsafeRawBufferPointer, path: String, how: String) -> Int? {
            guard let v = StressPack.claimedVersion(raw), let want = expected[v]?[path] else {
                errors.append("\(how) \(path): bytes of no known version")
                return nil
            }
            guard raw.count == want.count, want.withUnsafeBytes({ $0.elementsEqual(raw) }) else {
                errors.append("\(how) \(path): \(raw.count) bytes claiming version \(v) are not that version's")
                return nil
            }
            return v
        }
        func readAll(_ fd: Int32, offset: Int64, length: Int64) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: Int(length))
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            return n == Int(length) ? buffer : []
        }

        var i = 0
        while Date() < deadline && errors.count < 20 {
            i += 1
            let member = members[i % members.count]
            let mode = i % 3
            do throws(StoreError) {
                var version: Int?
                var h: Held?
                switch mode {
                case 0:
                    let data = try store.contents(at: member.path, inPack: id)
                    version = data.withUnsafeBytes { check($0, path: member.path, how: "contents") }
                    bytes += data.count
                    if let version { h = Held(data: data, version: version, path: member.path) }
                default:
                    let d = try store.descriptor(for: member.path, inPack: id, options: mode == 2 ? .standalone : [])
                    let (offset, length) = (d.offset, d.length)
                    let fd = d.take()
                    let got = readAll(fd, offset: offset, length: length)
                    version = got.withUnsafeBytes { check($0, path: member.path, how: mode == 2 ? "standalone" : "descriptor") }
                    bytes += got.count
                    if let version, i % 7 == 0 {
                        h = Held(fd: fd, offset: offset, length: length, version: version, path: member.path)
                    } else {
                        close(fd)
                    }
                }
                reads += 1
                if let version { byVersion[version, default: 0] += 1 }
                if let h {
                    held.append(h)
                    if held.count > 8 {
                        let old = held.removeFirst()
                        if old.fd >= 0 { close(old.fd) }
                    }
                }
            } catch .assetPackNotFound {
                notFound += 1
            } catch .archiveMissing {
                // Both snapshots the store tried named archives already
                // replaced: reported apart, see StressTests.
                archiveMissing += 1
            } catch {
                errors.append("\(member.path): \(error)")
            }
            if i % 25 == 0 {
                for h in held {
                    heldChecks += 1
                    let want = expected[h.version]![h.path]!
                    let ok: Bool
                    if let data = h.data {
                        ok = data == Data(want)
                    } else {
                        ok = readAll(h.fd, offset: h.offset, length: h.length) == want
                    }
                    if !ok { errors.append("held \(h.path) of version \(h.version) changed after the pack moved on") }
                }
            }
        }
        return [
            "reads": reads, "bytes": bytes, "notFound": notFound, "heldChecks": heldChecks, "archiveMissing": archiveMissing,
            "byVersion": Dictionary(uniqueKeysWithValues: byVersion.map { (String($0.key), $0.value) }),
            "errors": errors,
        ]
    }
}
