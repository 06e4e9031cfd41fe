/// A file source keeps no position of its own for ``FileByteSource/read(at:count:)`` but does
/// for ``FileByteSource/read(into:maxCount:)``: one thread at a time.
@available(*, unavailable)
extension FileByteSource: Sendable {}

/// A file sink buffers writes: one thread at a time.
@available(*, unavailable)
extension FileByteSink: Sendable {}
