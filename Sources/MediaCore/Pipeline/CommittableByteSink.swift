/// A byte sink whose output is complete only when committed: a file written under a temporary
/// name and renamed, or memory. Sinks that write a file on top of one use it to finish or
/// abandon the file they write.
public protocol CommittableByteSink: ByteSink {
    /// Pushes buffered bytes to the file without committing (a crash-safe checkpoint).
    mutating func flush() throws(ByteStreamError)
    /// Makes the output final (a file gets its name).
    mutating func commit() throws(ByteStreamError)
    /// Abandons the output (a temporary file is removed).
    mutating func cancel()
    /// Removes the output, even one written in place (a recording that never started).
    mutating func discard()
}

extension FileByteSink: CommittableByteSink {}

extension ArrayByteSink: CommittableByteSink {
    /// Nothing to do: the bytes are in memory.
    public mutating func flush() throws(ByteStreamError) {}
    /// Nothing to do: the bytes are the output.
    public mutating func commit() throws(ByteStreamError) {}
    /// Nothing to do: the caller drops the value.
    public mutating func cancel() {}
    /// Empties the bytes.
    public mutating func discard() { self = ArrayByteSink() }
}
