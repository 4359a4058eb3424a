@testable import AssetArchive
import Testing

/// Inflating: whole members into a buffer of their declared size (decoded
/// by libdeflate, with zlib as the arbiter of anything it does not accept
/// exactly) and members streamed through a smaller window (zlib) give the
/// same bytes and the same refusals.
@Suite struct InflateTests {
    /// Inflates `data` expecting `expected` bytes: into one buffer of that
    /// size when `windowSize` covers it, else through a scratch window of
    /// `windowSize` bytes. Returns the bytes or the failure.
    private func inflate(_ data: [UInt8], expected: Int, windowSize: Int) -> Result<[UInt8], Inflater.Failure> {
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 1)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, expected), alignment: 1)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, windowSize), alignment: 1)
        defer {
            input.deallocate()
            output.deallocate()
            scratch.deallocate()
        }
        input.copyBytes(from: data)
        var collected: [UInt8] = []
        do throws(Inflater.Failure) {
            var inflater = try Inflater()
            try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[..<data.count]), expected: UInt64(expected),
                                 window: { produced, remaining in
                                     if windowSize >= expected {
                                         let start = Int(produced)
                                         return UnsafeMutableRawBufferPointer(rebasing: output[start ..< start + Int(remaining)])
                                     }
                                     return UnsafeMutableRawBufferPointer(rebasing: scratch[..<min(Int(remaining), scratch.count)])
                                 },
                                 consume: { collected.append(contentsOf: $0); return true })
        } catch {
            return .failure(error)
        }
        return .success(collected)
    }

    @Test(arguments: [1, 100, 5000, 300_000])
    func wholeAndStreamedAgree(lines: Int) throws {
        let content = text(lines: lines)
        let stream = Deflate.raw(content)
        let whole = try inflate(stream, expected: content.count, windowSize: content.count).get()
        let streamed = try inflate(stream, expected: content.count, windowSize: 4096).get()
        #expect(whole == content)
        #expect(streamed == content)
    }

    @Test func refusalsAreTheSameEitherWay() throws {
        let content = text(lines: 200)
        let stream = Deflate.raw(content)
        let cases: [(data: [UInt8], expected: Int)] = [
            (Array(stream.dropLast(4)), content.count),          // cut short
            (stream + [0, 0, 0], content.count),                  // bytes after the end
            (stream, content.count - 1),                          // longer than declared
            (stream, content.count + 10),                         // shorter than declared
            ([0xff, 0xff, 0xff, 0xff, 0xff, 0xff], content.count), // not deflate
        ]
        for c in cases {
            let whole = inflate(c.data, expected: c.expected, windowSize: c.expected)
            let streamed = inflate(c.data, expected: c.expected, windowSize: 1000)
            guard case .failure(let a) = whole, case .failure(let b) = streamed else {
                Issue.record("accepted a bad stream: \(whole), \(streamed)")
                continue
            }
            #expect(String(describing: a) == String(describing: b))
        }
    }

    @Test func extractIntoTheDeclaredSizeRefusesWhatVerifyRefuses() throws {
        let content = text(lines: 40)
        let stream = Deflate.raw(content)
        var cut = ZipBuilder.Member("cut", content, method: 8)
        cut.data = Array(stream.dropLast(4))
        var padded = ZipBuilder.Member("padded", content, method: 8)
        padded.data = stream + [0, 0, 0]
        #expect(throws: ArchiveError.corruptData(archive: "t.zip", path: "cut", detail: "the deflate stream is cut short")) {
            try extractAll(ZipBuilder([cut]).build())
        }
        #expect(throws: ArchiveError.corruptData(archive: "t.zip", path: "padded", detail: "3 bytes follow the end of the deflate stream")) {
            try extractAll(ZipBuilder([padded]).build())
        }
    }
}
