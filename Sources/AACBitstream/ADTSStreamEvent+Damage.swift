public import MediaCore

extension ADTSStreamEvent {
    /// The event as pipeline damage; `nil` for an ID3 tag, which is expected, not damage.
    public var damage: DamageEvent? {
        switch self {
        case .id3Tag:
            nil
        case .skippedBytes(let offset, let count):
            DamageEvent(.skippedBytes(count: count), at: offset, message: description)
        case .truncatedFrame(let offset, let declared, let available):
            DamageEvent(.truncated(declared: Int64(declared), available: Int64(available)), at: offset, message: description)
        case .truncatedTag(let offset, let declared, let available):
            DamageEvent(.truncated(declared: declared, available: available), at: offset, message: description)
        case .crcMismatch(let offset, _, _):
            DamageEvent(.checksumMismatch, at: offset, message: description)
        }
    }
}
