/// An error from ``Environment/read(_:)`` or ``Environment/write(_:)``: either
/// LMDB failed around the body (beginning, renewing or committing the
/// transaction, growing the map), or the body threw.
///
/// The body's error keeps its type. A body annotated `throws(InstallError)`
/// makes the call throw `TransactionError<InstallError>`, which a caller
/// matches without casts:
///
/// ```swift
/// do {
///     try env.write { (txn) throws(InstallError) in … }
/// } catch .body(.alreadyInstalled) {
///     …
/// } catch .lmdb(let error) {
///     …
/// }
/// ```
///
/// A body without an annotation that calls throwing functions throws
/// `any Error` (Swift's inference for closures), so the call throws
/// `TransactionError<any Error>`; in an untyped `throws` context it simply
/// propagates with `try`. ``flattened(_:)`` folds both cases into one error
/// type, and ``underlying`` unwraps to `any Error`.
///
/// Errors that LMDB reports *inside* the body (from `get`, `put`, …) are the
/// body's errors: they arrive as `.body`, or, for a body typed
/// `throws(LMDBError)`, use ``lmdbError``.
public enum TransactionError<Body: Error>: Error {
    /// LMDB failed outside the body.
    case lmdb(LMDBError)
    /// The body threw. In a write, the transaction was aborted: nothing it
    /// wrote is visible.
    case body(Body)

    /// The error itself, whichever case it is.
    public var underlying: any Error {
        switch self {
        case .lmdb(let error): return error
        case .body(let error): return error
        }
    }

    /// The LMDB error, whether LMDB failed around the body or the body threw
    /// one (directly or as `any Error`); `nil` if the body threw something else.
    public var lmdbError: LMDBError? {
        switch self {
        case .lmdb(let error): return error
        case .body(let error): return error as? LMDBError
        }
    }

    /// Folds both cases into the body's error type: LMDB failures go through
    /// `wrap`.
    ///
    /// ```swift
    /// } catch { throw error.flattened(StoreError.index) }
    /// ```
    public func flattened(_ wrap: (LMDBError) -> Body) -> Body {
        switch self {
        case .lmdb(let error): return wrap(error)
        case .body(let error): return error
        }
    }
}

extension TransactionError: CustomStringConvertible {
    /// The underlying error's description.
    public var description: String { String(describing: underlying) }
}

extension TransactionError: Equatable where Body: Equatable {}

extension TransactionError where Body == LMDBError {
    /// The LMDB error, from the body or from around it: for bodies typed
    /// `throws(LMDBError)`, both cases are one kind of failure.
    public var flattened: LMDBError {
        switch self {
        case .lmdb(let error), .body(let error): return error
        }
    }
}

extension TransactionError where Body == Never {
    /// The LMDB error: a body that cannot throw leaves only this case.
    public var flattened: LMDBError {
        switch self {
        case .lmdb(let error): return error
        }
    }
}
