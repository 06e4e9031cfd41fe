internal import AACBitstream
internal import AudioCodec
internal import MediaCore
internal import Publishing

/// How a job's live destinations are made: the settings they share, and tee branches that feed
/// them (`publish`, `record --publish`).
struct LiveDestinationSettings: Sendable {
    /// The codecs a branch's encoder comes from.
    var codecs: AudioCodecRegistry
    /// Audio each destination queues before dropping the oldest.
    var queueDuration: Duration = .seconds(5)
    /// Reconnects and timeouts.
    var policy = ReconnectPolicy()
    /// Certificate authorities for TLS destinations.
    var trustRoots: String?
    /// The stream's title, when fixed.
    var title: String?
    /// The stream carries timed metadata (SRT: a timed ID3 stream).
    var timedMetadata = false

    /// A sink for `destination`, reporting into `statistics`, announcing `bitrate`.
    func sink(_ destination: PublishingDestination, statistics: DestinationStatistics, bitrate: Int?) -> LiveDestination {
        var sink = LiveDestination(destination, queueDuration: queueDuration, policy: policy, trustRoots: trustRoots, title: title,
                                   statistics: statistics, timedMetadata: timedMetadata)
        if let bitrate { sink.announce(bitrate: bitrate) }
        return sink
    }

    /// Expendable branches of packets, a destination each.
    func packetBranches(_ destinations: [(PublishingDestination, DestinationStatistics)], bitrate: Int?) -> [Tee<MediaSample>.Branch] {
        destinations.map { destination, statistics in
            Tee<MediaSample>.Branch(sink(destination, statistics: statistics, bitrate: bitrate), name: destination.maskedURL,
                                    policy: .expendable)
        }
    }

    /// An encoder of AAC of `profile` (AAC-LC, HE-AAC v1 `.sbr` or v2 `.ps`) at `bitrate` for
    /// a branch of its own, opened: `bitrate` lowered to fit the input with `lowersBitrateToFit`
    /// (AAC-LC: to what AAC carries at its rate and channels; HE-AAC: to its default for them,
    /// so a bitrate asked of HE-AAC goes without it, to be taken or refused); its ``bitrate``
    /// says what it took.
    /// Another `codec` (MP3, Opus) comes from the codec registry the same way, `profile` aside.
    func encoder(bitrate: Int, format: PCMFormat, coder: AACEncoder.Coder = .fast, profile: AudioObjectType = .aacLC,
                 lowersBitrateToFit: Bool = true, codec: AudioCodecID = .aac) throws(PipelineError) -> any AudioEncoder {
        do {
            return try codecs.encoder(for: codec, profile: profile, settings: .init(
                bitrate: bitrate, lowersBitrateToFit: lowersBitrateToFit, format: format, aac: .init(coder: coder)))
        } catch {
            throw .codec(error)
        }
    }

    /// An expendable branch of PCM that encodes with `encoder` (``encoder(bitrate:format:coder:profile:lowersBitrateToFit:)``)
    /// on a thread of its own (one encoder per bitrate, in parallel, and the capture or pacing
    /// thread never waits on it) into `destinations`.
    ///
    /// A destination that reconnects starts again at whatever packet comes next: nothing tells
    /// the encoder, so for HE-AAC a player there starts with the AAC-LC core alone until the next
    /// SBR header, which ``/AudioCodec/HEAACEncoder`` repeats every 8 frames (about 0.34 s at
    /// 48 kHz).
    func encodingBranch(encoder: sending any AudioEncoder,
                        destinations: [(PublishingDestination, DestinationStatistics)]) -> Tee<PCMBuffer>.Branch {
        let actual = encoder.bitrate
        let tee = Tee(packetBranches(destinations, bitrate: actual))
        return Self.threadedBranch(encoder: encoder, into: tee, name: "\(actual / 1000)k")
    }

    /// A branch of PCM that encodes with `encoder` on a thread of its own into `tee` (of
    /// `policy`: expendable for destinations; required for a ladder's renditions).
    static func threadedBranch<Encoder: AudioEncoder>(encoder: sending Encoder, into tee: sending Tee<MediaSample>,
                                                      name: String, policy: Tee<PCMBuffer>.Branch.Policy = .expendable) -> Tee<PCMBuffer>.Branch {
        Tee.Branch(threaded: tee.transforming(by: encoder), name: name, policy: policy, queueCapacity: 32)
    }
}
