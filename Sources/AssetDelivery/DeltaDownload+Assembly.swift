import Dispatch
import Foundation
import Synchronization
import AssetArchive
import AssetStore
import AssetSystem

/// One delta download's file being put together (``DeltaDownload``): what
/// is in place (checked again on resume), the glue, the copies, the ranges.
final class DeltaAssembly {
    typealias Stop = DeltaDownload.Stop
    typealias Step = DeltaDownload.Step

    let delta: DeltaDownload
    let map: PieceMap
    let partial: PartialDownload
    let ledger: DeltaLedger
    /// Bytes received from the server (piece map, glue, ranges) and copied from archives.
    private(set) var fetched: UInt64
    private(set) var reused: UInt64 = 0
    /// Bytes of the file in place (at most the file's size is reported).
    private var placed: UInt64 = 0
    private var glueDone = false
    private var memberDone: [Bool]
    /// The file's byte ranges in place (copied or fetched).
    private var coverage = ByteRanges()

    var size: UInt64 { delta.request.size }

    init(delta: DeltaDownload, map: PieceMap, partial: PartialDownload, fetchedBefore: UInt64) throws(Stop) {
        self.delta = delta
        self.map = map
        self.partial = partial
        self.fetched = fetchedBefore
        memberDone = map.members.map { $0.size == 0 }
        do { ledger = try DeltaLedger(path: partial.rangesPath) } catch { throw .fatal(.system(error)) }
        if partial.resumed { try resume() }
    }

    /// Takes what the ranges file says is in place, once checked: the glue
    /// and every member covered whole are hashed again from the file.
    private func resume() throws(Stop) {
        var claimedGlue = false
        var copied = ByteRanges()
        for piece in DeltaLedger.read(partial.rangesPath, size: size) {
            switch piece {
            case .glue: claimedGlue = true
            case .copied(let r): coverage.insert(r); copied.insert(r)
            case .fetched(let r): coverage.insert(r)
            }
        }
        if claimedGlue, try hashOfFile(map.glueRanges) == map.glue.sha256 {
            glueDone = true
            placed += map.glue.size
        }
        for (i, member) in map.members.enumerated() where !memberDone[i] {
            let range = member.offset..<member.offset + member.size
            guard coverage.covers(range) else {
                placed += range.length - coverage.gaps(in: range).reduce(0) { $0 + $1.length }
                continue
            }
            if try hashOfFile([range]) == member.sha256 {
                memberDone[i] = true
                placed += member.size
                if copied.covers(range) { reused += member.size }
            } else {
                coverage.remove(range)
            }
        }
    }

    /// Glue, copies, ranges: every byte of the file in place.
    func build(from source: ReuseSource) throws(Stop) {
        try report()
        if !glueDone { try fetchGlue() }
        try copyMembers(from: source)
        try fetchRanges()
        try report()
    }

    // MARK: The glue

    /// The glue file in one GET, its bytes placed at the glue ranges as they
    /// arrive; its size and SHA-256 must be the piece map's.
    private func fetchGlue() throws(Stop) {
        let ranges = map.glueRanges
        let url = CatalogFetcher.resolve(map.glue.url, against: delta.request.pieces?.url ?? delta.request.url)
        let expected = map.glue.size
        let client = try delta.makeClient()
        var digest = [UInt8]()
        try delta.retrying("glue") { () -> Step in
            var hasher = SHA256()
            var received: UInt64 = 0
            var index = 0
            var within: UInt64 = 0
            var stop: Step?
            do throws(HTTPClient.Failure) {
                try client.get(url) { [self] _, chunk in
                    guard received + UInt64(chunk.count) <= expected else {
                        stop = .stop(.fallback("delta: the glue is longer than the piece map says; full download"))
                        return false
                    }
                    hasher.update(chunk)
                    var at = 0
                    while at < chunk.count {
                        while index < ranges.count && within == ranges[index].length { index += 1; within = 0 }
                        guard index < ranges.count else { break }
                        let n = Int(min(UInt64(chunk.count - at), ranges[index].length - within))
                        do throws(Errno) {
                            try partial.descriptor.write(UnsafeRawBufferPointer(rebasing: chunk[at..<at + n]),
                                                         at: Int64(ranges[index].lowerBound + within))
                        } catch {
                            stop = .stop(.fatal(.system(error)))
                            return false
                        }
                        at += n
                        within += UInt64(n)
                    }
                    received += UInt64(chunk.count)
                    if let interruption = progressed(inFlight: received) {
                        stop = .interrupted(interruption)
                        return false
                    }
                    return true
                }
            } catch {
                fetched += received
                return stop ?? delta.step(for: error, what: "glue")
            }
            fetched += received
            if let stop { return stop }
            guard received == expected else {
                return .stop(.fallback("delta: the glue has \(received) bytes, not the piece map's \(expected); full download"))
            }
            digest = hasher.finalize()
            return .done
        }
        guard SHA256.hex(digest) == map.glue.sha256 else { throw .fallback("delta: glue SHA-256 mismatch; full download") }
        try record(.glue)
        glueDone = true
        placed += expected
    }

    // MARK: Copies

    /// Copies each member not in place from the first installed candidate
    /// whose copied bytes have the piece map's SHA-256. A member whose every
    /// candidate fails that check (an installed archive damaged on disk) is
    /// fetched with the rest, and the status record says so.
    private func copyMembers(from source: ReuseSource) throws(Stop) {
        var damaged: [ReuseSource.Candidate] = []
        defer {
            if let first = damaged.first {
                delta.monitor?.going(.delta, note: "delta: \(damaged.count) installed member(s) did not match the piece map's SHA-256 "
                                     + "(first: \(first.path) in \(first.pack)); fetched instead")
            }
        }
        for (i, member) in map.members.enumerated() where !memberDone[i] {
            let range = member.offset..<member.offset + member.size
            // A member partly fetched already is finished by ranges.
            guard coverage.gaps(in: range) == [range] else { continue }
            let candidates = source.candidates(method: member.method, crc32: member.crc32, length: member.length,
                                               storedSize: member.size, path: member.path)
            for candidate in candidates {
                guard let digest = try? source.copy(candidate, to: partial.descriptor, at: member.offset),
                      SHA256.hex(digest) == member.sha256 else { continue }
                try record(.copied(range))
                memberDone[i] = true
                coverage.insert(range)
                reused += member.size
                placed += member.size
                break
            }
            if !memberDone[i], let first = candidates.first { damaged.append(first) }
            try report()
        }
    }

    // MARK: Ranges

    /// The member bytes not in place, fetched as merged ranges of the pack's
    /// URL, several at once; a pause stops them all and goes on after it.
    private func fetchRanges() throws(Stop) {
        var missing: [Range<UInt64>] = []
        for (i, member) in map.members.enumerated() where !memberDone[i] {
            missing += coverage.gaps(in: member.offset..<member.offset + member.size)
        }
        var pending = DeltaDownload.plan(missing)
        while !pending.isEmpty {
            let work: RangeWork
            do {
                work = try RangeWork(request: delta.request, options: delta.options, deadline: delta.downloader.deadline, path: partial.path,
                                     ledger: ledger, pending: pending)
            } catch {
                throw .fatal(.system(error))
            }
            let group = DispatchGroup()
            for _ in 0..<max(1, min(delta.options.maximumRangeRequests, 64, pending.count)) {
                group.enter()
                Thread.detachNewThread {
                    work.run()
                    group.leave()
                }
            }
            var interruption: DownloadInterruption?
            while group.wait(timeout: .now() + DownloadReporter.controlInterval) == .timedOut {
                if interruption == nil, let asked = progressed(inFlight: work.received) {
                    interruption = asked
                    work.stopAll()
                }
            }
            let (completed, stop) = work.result
            fetched += work.received
            for range in completed {
                coverage.insert(range)
                placed += range.length
            }
            if let stop { throw stop }
            if let interruption { try delta.obey(interruption) }
            let done = Set(completed)
            pending.removeAll { done.contains($0) }
        }
    }

    // MARK: Bookkeeping

    private func record(_ piece: DeltaLedger.Piece) throws(Stop) {
        do { try ledger.append(piece) } catch { throw .fatal(.system(error)) }
    }

    /// Tells the monitor the counts, obeying what it asks.
    private func report() throws(Stop) {
        if let interruption = progressed(inFlight: 0) { try delta.obey(interruption) }
    }

    /// Tells the monitor the counts, with `inFlight` bytes received and
    /// written but not yet counted; returns what it asks.
    private func progressed(inFlight: UInt64) -> DownloadInterruption? {
        guard let monitor = delta.monitor else { return nil }
        monitor.counted(fetched: fetched + inFlight, reused: reused)
        return monitor.progressed(min(size, placed + inFlight), of: size)
    }

    /// The SHA-256 (hex) of the file's bytes in `ranges`, in order.
    private func hashOfFile(_ ranges: [Range<UInt64>]) throws(Stop) -> String {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for range in ranges {
            var at = range.lowerBound
            while at < range.upperBound {
                let want = Int(min(UInt64(buffer.count), range.upperBound - at))
                let got = buffer.withUnsafeMutableBytes { b in
                    Result { () throws(Errno) in try partial.descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]), at: Int64(at)) }
                }
                switch got {
                case .success(let n) where n == want:
                    buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                    at += UInt64(n)
                case .success:
                    return ""
                case .failure(let error):
                    throw .fatal(.system(error))
                }
            }
        }
        return SHA256.hex(hasher.finalize())
    }
}

/// The ranges of one round of a delta's fetches, shared by its workers:
/// each takes the next range, GETs it (`Range: bytes=FIRST-LAST`, the
/// `206`'s `Content-Range` checked), writes its bytes where they belong and
/// records it in the ledger.
final class RangeWork: Sendable {
    private struct State {
        var pending: [Range<UInt64>]
        var completed: [Range<UInt64>] = []
        var stopped = false
        var stop: DeltaDownload.Stop?
        var received: UInt64 = 0
    }

    private let state: Mutex<State>
    private let file: FileDescriptor
    private let ledger: DeltaLedger
    private let request: DownloadRequest
    private let options: Downloader.Options
    /// The download's total deadline, which every worker's client keeps.
    private let deadline: HTTPClient.Deadline?

    init(request: DownloadRequest, options: Downloader.Options, deadline: HTTPClient.Deadline?, path: String, ledger: DeltaLedger,
         pending: [Range<UInt64>]) throws(Errno) {
        self.request = request
        self.options = options
        self.deadline = deadline
        self.ledger = ledger
        file = try FileDescriptor.open(path, [.writeOnly, .noFollow])
        state = Mutex(State(pending: pending.reversed()))
    }

    /// Bytes received so far, by every worker.
    var received: UInt64 { state.withLock { $0.received } }
    /// The ranges completed, and why the round stopped early (if it did).
    var result: ([Range<UInt64>], DeltaDownload.Stop?) { state.withLock { ($0.completed, $0.stop) } }
    private var stopped: Bool { state.withLock { $0.stopped } }

    /// Stops every worker at its next piece of a body.
    func stopAll() { state.withLock { $0.stopped = true } }

    private func fail(_ stop: DeltaDownload.Stop) {
        state.withLock { s in
            if s.stop == nil { s.stop = stop }
            s.stopped = true
        }
    }

    /// One worker: ranges until none is left or the round stops.
    func run() {
        let client: HTTPClient
        do { client = try HTTPClient(configuration: options.http) } catch {
            fail(.fatal(error.caFileRefusal(options.http)
                        ?? .downloadFailed(url: request.url, pack: request.pack, problem: .transport, detail: error.message)))
            return
        }
        client.deadline = deadline
        while let range = state.withLock({ s in s.stopped ? nil : s.pending.popLast() }) {
            fetch(range, with: client)
        }
    }

    private func fetch(_ range: Range<UInt64>, with client: HTTPClient) {
        var got: UInt64 = 0
        var attempts = 0
        while !stopped {
            attempts += 1
            let first = range.lowerBound + got
            var checked = false
            var stop: DeltaDownload.Stop?
            var failure: HTTPClient.Failure?
            do throws(HTTPClient.Failure) {
                try client.get(request.url, rangeStart: first, rangeEnd: range.upperBound - 1) { [self] head, chunk in
                    if !checked {
                        checked = true
                        guard head.isPartial(first: first, last: range.upperBound - 1, total: request.size) else {
                            stop = .fallback(head.status == 206
                                ? "delta: the server sent another range than the one asked for; full download"
                                : "delta: the server ignores Range (HTTP \(head.status) to a range request); full download")
                            return false
                        }
                    }
                    guard got + UInt64(chunk.count) <= range.length else {
                        stop = .fallback("delta: the server sent more than the range asked for; full download")
                        return false
                    }
                    do throws(Errno) { try file.write(chunk, at: Int64(range.lowerBound + got)) } catch {
                        stop = .fatal(.system(error))
                        return false
                    }
                    got += UInt64(chunk.count)
                    state.withLock { $0.received += UInt64(chunk.count) }
                    return !stopped
                }
            } catch {
                failure = error
            }
            if let stop { return fail(stop) }
            if got == range.length {
                do { try ledger.append(.fetched(range)) } catch { return fail(.fatal(.system(error))) }
                state.withLock { $0.completed.append(range) }
                return
            }
            if stopped { return }
            let detail: String
            if let failure {
                if case .timedOut = failure.problem {
                    return fail(.fatal(.downloadFailed(url: request.url, pack: request.pack, problem: failure.problem, detail: "")))
                }
                guard failure.isTransient else {
                    let why = failure.status.map { "HTTP \($0)" } ?? failure.message
                    return fail(.fallback("delta: a range could not be fetched (\(why)); full download"))
                }
                detail = failure.status.map { "HTTP \($0)" } ?? failure.message
            } else {
                detail = "the range ended early"
            }
            guard attempts < options.maximumAttempts else {
                return fail(.fatal(.downloadFailed(url: request.url, pack: request.pack, problem: .retriesExhausted(attempts: attempts),
                                                   detail: "range: \(detail)")))
            }
            // The backoff, cut short when the round stops.
            let deadline = Monotonic.now + options.backoff(after: attempts)
            while !stopped && Monotonic.now < deadline { Monotonic.sleep(min(0.05, max(0, deadline - Monotonic.now))) }
        }
    }
}

/// A delta download's list of pieces in place, `<file>.download.ranges`:
/// a line appended after each piece's bytes are written. A line that is
/// torn (no newline) or not one of these is ignored.
///
/// ```
/// g                  the glue
/// c 1024 5120        a member copied to bytes 1024..<5120
/// f 5120 9216        a range fetched
/// ```
final class DeltaLedger: Sendable {
    enum Piece: Equatable, Sendable {
        case glue
        case copied(Range<UInt64>)
        case fetched(Range<UInt64>)
    }

    private let file: FileDescriptor
    private let lock = Mutex(())

    /// Opens (creates) the list at `path` for appending; a torn last line
    /// is ended first, so that it stays one line to ignore.
    init(path: String) throws(Errno) {
        file = try FileDescriptor.open(path, [.readWrite, .create, .append, .noFollow])
        let size = try file.status().size
        if size > 0, try file.read(count: 1, at: Int64(size - 1)) != [0x0a] { try file.write([UInt8(0x0a)]) }
    }

    /// Appends the line of `piece`.
    func append(_ piece: Piece) throws(Errno) {
        let line: String
        switch piece {
        case .glue: line = "g\n"
        case .copied(let r): line = "c \(r.lowerBound) \(r.upperBound)\n"
        case .fetched(let r): line = "f \(r.lowerBound) \(r.upperBound)\n"
        }
        try lock.withLock { _ throws(Errno) in try file.write(Array(line.utf8)) }
    }

    /// The pieces the list at `path` names within a file of `size` bytes
    /// (none when there is no list).
    static func read(_ path: String, size: UInt64) -> [Piece] {
        guard let fd = try? FileDescriptor.open(path, [.readOnly, .noFollow]), let bytes = try? fd.readToEnd() else { return [] }
        var pieces: [Piece] = []
        var lines = bytes.split(separator: 0x0a, omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty, or a torn line
        for line in lines {
            let words = line.split(separator: 0x20).map { String(decoding: $0, as: UTF8.self) }
            if words == ["g"] {
                pieces.append(.glue)
            } else if words.count == 3, let a = UInt64(words[1]), let b = UInt64(words[2]), a < b, b <= size {
                if words[0] == "c" { pieces.append(.copied(a..<b)) }
                if words[0] == "f" { pieces.append(.fetched(a..<b)) }
            }
        }
        return pieces
    }
}

extension Range where Bound == UInt64 {
    /// How many bytes the range holds.
    var length: UInt64 { upperBound - lowerBound }
}

/// A set of byte ranges, kept sorted and merged.
struct ByteRanges: Equatable {
    private(set) var ranges: [Range<UInt64>] = []

    mutating func insert(_ range: Range<UInt64>) {
        guard !range.isEmpty else { return }
        var lower = range.lowerBound, upper = range.upperBound
        var kept: [Range<UInt64>] = []
        for r in ranges {
            if r.upperBound < lower || r.lowerBound > upper {
                kept.append(r)
            } else {
                lower = min(lower, r.lowerBound)
                upper = max(upper, r.upperBound)
            }
        }
        kept.append(lower..<upper)
        ranges = kept.sorted { $0.lowerBound < $1.lowerBound }
    }

    mutating func remove(_ range: Range<UInt64>) {
        ranges = ranges.flatMap { r -> [Range<UInt64>] in
            guard r.overlaps(range) else { return [r] }
            return [r.lowerBound..<max(r.lowerBound, range.lowerBound), min(r.upperBound, range.upperBound)..<r.upperBound].filter { !$0.isEmpty }
        }
    }

    func covers(_ range: Range<UInt64>) -> Bool {
        range.isEmpty || ranges.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
    }

    /// The parts of `range` not in the set, in order.
    func gaps(in range: Range<UInt64>) -> [Range<UInt64>] {
        var gaps: [Range<UInt64>] = []
        var at = range.lowerBound
        for r in ranges where r.upperBound > at && r.lowerBound < range.upperBound {
            if r.lowerBound > at { gaps.append(at..<r.lowerBound) }
            at = max(at, r.upperBound)
        }
        if at < range.upperBound { gaps.append(at..<range.upperBound) }
        return gaps
    }
}
