extension HLSSegmentOutput {
    /// A live rendition: what changes when the packets come from a capture.
    public struct Live: Sendable, Hashable {
        /// Segments the playlist lists (a sliding window, `EXT-X-MEDIA-SEQUENCE` counting the
        /// ones that left it), or 0 for an event playlist that keeps them all
        /// (`EXT-X-PLAYLIST-TYPE:EVENT`).
        public var window: Int
        /// The wall-clock time of the first sample, seconds since 1970 (UTC): each segment's
        /// `EXT-X-PROGRAM-DATE-TIME` is it plus the samples before the segment.
        public var startDate: Double?
        /// Low-latency HLS: the part target in seconds. Each part (a CMAF chunk, whole frames,
        /// at most this long) is written as `segment-NNNNN.P.m4s` and listed (`EXT-X-PART`) as
        /// soon as it is recorded; a segment is its parts after a `styp`. `nil`: no parts.
        public var partDuration: Double?
        /// Where each playlist is also published, for a server's blocking reloads.
        public var publication: LiveHLSPublication?
        /// The capture clock: the wall-clock time of the first frame, once known; it wins over
        /// ``startDate``.
        public var clock: (@Sendable () -> Double?)?
        /// Remote stores every file is also copied into as it is written, and removed from when
        /// it leaves the window (``ObjectStoreReplica``), each file named ``replicaPrefix`` and
        /// its name (`64k/segment-00001.m4s`).
        public var replicas: [ObjectStoreReplica] = []
        /// What the files' names in ``replicas`` start with: empty, or a rendition's directory
        /// in a ladder (`64k/`).
        public var replicaPrefix = ""

        /// A live rendition.
        public init(window: Int = 0, startDate: Double? = nil, partDuration: Double? = nil, publication: LiveHLSPublication? = nil,
                    clock: (@Sendable () -> Double?)? = nil) {
            self.window = window
            self.startDate = startDate
            self.partDuration = partDuration
            self.publication = publication
            self.clock = clock
        }

        /// Live settings are equal when their values, publication and replicas (by identity) are.
        public static func == (lhs: Live, rhs: Live) -> Bool {
            lhs.window == rhs.window && lhs.startDate == rhs.startDate && lhs.partDuration == rhs.partDuration && lhs.publication === rhs.publication
                && lhs.replicas.map(ObjectIdentifier.init) == rhs.replicas.map(ObjectIdentifier.init) && lhs.replicaPrefix == rhs.replicaPrefix
        }

        /// Hashes the window and part duration.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(window)
            hasher.combine(partDuration)
        }

        /// How the segmenting policy cuts this rendition: in parts when it has a part duration.
        var segmentingMode: HLSSegmentingPolicy.Mode {
            partDuration.map { .lowLatency(partDuration: $0) } ?? .live
        }
    }
}
