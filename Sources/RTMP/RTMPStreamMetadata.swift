/// What an encoder says about its stream in `@setDataFrame` `onMetaData` (a data message, RTMP
/// 1.0 7.1.2; the fields of FLV spec v10.1 E.5 `onMetaData`), as FFmpeg's FLV muxer writes them
/// for AAC audio. nginx-rtmp keeps it for players and recordings; CDN ingests expect it.
public struct RTMPStreamMetadata: Sendable, Hashable {
    /// Samples per second (`audiosamplerate`).
    public var sampleRate: Int
    /// Channels (`stereo` is whether there are two or more).
    public var channelCount: Int
    /// Bits per second (`audiodatarate`, in kb/s).
    public var bitrate: Int
    /// The stream's title (`title`), when given.
    public var title: String?
    /// The encoder's name (`encoder`).
    public var encoder: String

    /// The metadata of an AAC stream.
    public init(sampleRate: Int, channelCount: Int, bitrate: Int, title: String? = nil, encoder: String = "KeyFrameKit") {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitrate = bitrate
        self.title = title
        self.encoder = encoder
    }

    /// The `onMetaData` ECMA array: `duration` 0 (live), `audiodatarate`, `audiosamplerate`,
    /// `audiosamplesize` 16, `stereo`, `audiocodecid` 10 (AAC), `encoder`, then `title` if any.
    public var properties: [AMF0Property] {
        var properties = [
            AMF0Property("duration", .number(0)),
            AMF0Property("audiodatarate", .number(Double(bitrate) / 1000)),
            AMF0Property("audiosamplerate", .number(Double(sampleRate))),
            AMF0Property("audiosamplesize", .number(16)),
            AMF0Property("stereo", .boolean(channelCount >= 2)),
            AMF0Property("audiocodecid", .number(10)),
            AMF0Property("encoder", .string(encoder)),
        ]
        if let title { properties.append(AMF0Property("title", .string(title))) }
        return properties
    }

    /// The data message (type 18) `@setDataFrame`, `onMetaData`, ``properties`` on message
    /// stream `streamID`: the server keeps it and sends it to every player as `onMetaData`.
    public func setDataFrame(streamID: UInt32, timestamp: UInt32 = 0) -> RTMPMessage {
        RTMPMessage(type: .dataAMF0, streamID: streamID, timestamp: timestamp,
                    payload: AMF0Value.encode([.string("@setDataFrame"), .string("onMetaData"), .ecmaArray(properties)]))
    }
}
