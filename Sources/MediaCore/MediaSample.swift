/// One unit of media — a PCM buffer, an AAC packet, a video access unit — with its timing:
/// the currency of the pipeline (`CMSampleBuffer` on Apple's platforms). A value type.
public struct MediaSample: Sendable, Hashable {
    /// The sample's bytes (PCM frames, an AAC raw data block, or length-prefixed NAL units).
    public var data: [UInt8]
    /// When the sample is presented.
    public var presentationTime: MediaTime
    /// When the sample is decoded; equal to ``presentationTime`` unless frames are reordered.
    public var decodeTime: MediaTime
    /// How long the sample lasts.
    public var duration: MediaTime
    /// Whether decoding can start here (every audio packet; video key frames).
    public var isSync: Bool
    /// What the bytes are.
    public var format: FormatDescription
    /// The track the sample belongs to (1-based, as in ISO BMFF).
    public var trackID: UInt32

    /// A sample; `decodeTime` defaults to `presentationTime`.
    public init(
        data: [UInt8],
        presentationTime: MediaTime,
        decodeTime: MediaTime? = nil,
        duration: MediaTime,
        isSync: Bool = true,
        format: FormatDescription,
        trackID: UInt32 = 1
    ) {
        self.data = data
        self.presentationTime = presentationTime
        self.decodeTime = decodeTime ?? presentationTime
        self.duration = duration
        self.isSync = isSync
        self.format = format
        self.trackID = trackID
    }
}
