/// Where a stream writer puts its bytes.
public protocol ByteSink {
    /// Writes all of `bytes`.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(ByteStreamError)
}

extension ByteSink {
    /// Writes all of `bytes`.
    public mutating func write(_ bytes: [UInt8]) throws(ByteStreamError) {
        // withUnsafeBytes is rethrows-untyped; carry the typed error out by hand.
        var failure: ByteStreamError?
        bytes.withUnsafeBytes { buffer in
            do throws(ByteStreamError) { try self.write(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

/// A sink whose earlier bytes can be rewritten: for headers whose sizes are known only at the end
/// (WAV and RF64, MP4 box sizes).
public protocol SeekableByteSink: ByteSink {
    /// Bytes written so far (the length of the output).
    var byteCount: Int64 { get }
    /// Overwrites `bytes` already written, starting at absolute `offset`.
    mutating func overwrite(_ bytes: [UInt8], at offset: Int64) throws(ByteStreamError)
    /// Whether ``overwrite(_:at:)`` can be used: false for a stream (standard output), where a
    /// writer leaves what a streaming writer leaves (a WAV's sizes 0xFFFFFFFF, "unknown").
    var canOverwrite: Bool { get }
}

extension SeekableByteSink {
    /// A sink that can seek can overwrite.
    public var canOverwrite: Bool { true }
}
