import AssetSystem

// The CA file a client reads before libcurl sees it, and the failures of
// its deadlines.
extension HTTPClient {
    /// The largest CA file read: 4 MiB (a system's whole bundle is some 200 KiB).
    public static let maximumCAFileSize = 4 << 20

    /// The bytes of the CA file at `path`, read on the calling thread:
    /// opened with `O_NONBLOCK` (a FIFO without a writer, a device, does
    /// not block the open), refused unless `fstat` says it is a regular
    /// file, then read whole, at most ``maximumCAFileSize`` bytes.
    ///
    /// - Throws: `Failure` of kind `.badCAFile`, its ``Failure/caFileProblem``
    ///   saying what is wrong.
    static func readCAFile(_ path: String) throws(Failure) -> [UInt8] {
        func refuse(_ problem: DeliveryError.CAFileProblem) -> Failure {
            Failure(kind: .badCAFile, status: nil, message: DeliveryError.caFileRefused(path: path, problem: problem).description,
                    caFileProblem: problem)
        }
        // The file's bytes, or what is wrong with it (`fd` closes on return).
        let read = Result { () throws(Errno) -> CAFileRead in
            let fd = try FileDescriptor.open(path, [.readOnly, .nonBlocking])
            let status = try fd.status()
            guard status.isRegularFile else { return .refused(.notRegularFile(type: FileType(mode: status.mode).name)) }
            guard status.size <= maximumCAFileSize else {
                return .refused(.tooLarge(size: UInt64(max(status.size, 0)), maximum: UInt64(maximumCAFileSize)))
            }
            let bytes = try fd.readToEnd()
            guard bytes.count <= maximumCAFileSize else {
                return .refused(.tooLarge(size: UInt64(bytes.count), maximum: UInt64(maximumCAFileSize)))
            }
            return .bytes(bytes)
        }
        switch read {
        case .success(.bytes(let bytes)): return bytes
        case .success(.refused(let problem)): throw refuse(problem)
        case .failure(let error): throw refuse(.unreadable(error))
        }
    }

    /// Milliseconds left until `deadline`, rounded up so that libcurl's
    /// timeout (counted from a moment after this) ends the transfer at or
    /// after it, never before; at least 1 (0 would mean none to libcurl).
    static func milliseconds(until deadline: Deadline) -> Int {
        let now = Monotonic.nanoseconds
        return deadline.instant > now ? max(1, Int((deadline.instant - now + 999_999) / 1_000_000)) : 1
    }

    func deadlineFailure(_ deadline: Deadline, status: Int?) -> Failure {
        let ran: DeliveryError.Deadline = .total(seconds: deadline.seconds)
        return Failure(kind: .deadlineExceeded, status: status, message: ran.summary, deadline: ran)
    }

    func tooSlowFailure(status: Int?) -> Failure {
        let ran: DeliveryError.Deadline = .minimumSpeed(bytesPerSecond: configuration.effectiveLowSpeedLimit, seconds: configuration.lowSpeedTime)
        return Failure(kind: .tooSlow, status: status, message: ran.summary, deadline: ran)
    }
}

/// What reading a CA file came to, short of a system error.
private enum CAFileRead {
    case bytes([UInt8])
    case refused(DeliveryError.CAFileProblem)
}

/// A file's type, from `st_mode`, named for messages.
struct FileType {
    let mode: UInt32

    var name: String {
        switch mode & 0o170000 {
        case 0o010000: return "a FIFO"
        case 0o020000: return "a character device"
        case 0o040000: return "a directory"
        case 0o060000: return "a block device"
        case 0o100000: return "a regular file"
        case 0o120000: return "a symbolic link"
        case 0o140000: return "a socket"
        default: return "a file of unknown type"
        }
    }
}
